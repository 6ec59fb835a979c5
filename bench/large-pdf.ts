import { createWriteStream } from 'node:fs';
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { largePdf } from '../test/helpers/large-pdf.ts';
import type { Benchmark } from './lib/context.ts';
import { info } from './lib/report.ts';
import { startBenchService } from './lib/service.ts';

// One large PDF end to end (docs/DECISIONS.md, Large PDFs: nothing holds the whole file): a PDF of
// LARGE_PDF_MB megabytes (MiB; default 50, at most 500) is written to disk as it is generated
// (pages of a few known sentences and a 4 MiB image of random bytes each), uploaded through POST
// /upload/multipart in parts, and ingested from its download URL: pdf-fetch downloads and stores it
// in parts, pdf-extract copies it to a temporary file that the pdf.js child reads in ranges.
// Reported: wall times, and the peak resident size of the service's process (the local runtime:
// gateway and pipeline functions), of the pdf.js child and of the emulators, against the size.
// The service is its own (PDF_MAX_BYTES raised to the file's size, parts of 8 MiB: the local S3
// refuses bodies over 11 MiB), so its process holds this ingestion only.

const MiB = 1024 * 1024;
const POLL_MS = 250;
const SAMPLE_MS = 100;

function sizeMb(): number {
  const raw = process.env.LARGE_PDF_MB;
  const mb = raw ? Number(raw) : 50;
  if (!Number.isFinite(mb) || mb < 1 || mb > 500) throw new Error(`LARGE_PDF_MB must be 1 to 500, not ${raw}`);
  return mb;
}

/** Resident and peak resident size (MiB) of a process, from /proc; undefined once it is gone. */
async function resident(pid: number): Promise<{ rss: number; hwm: number; cmd: string } | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const cmd = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replaceAll('\0', ' ');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s*(\\d+)`, 'm').exec(status)?.[1] ?? 0) / 1024;
    return { rss: field('VmRSS'), hwm: field('VmHWM'), cmd };
  } catch {
    return undefined;
  }
}

/** The process ids below `pid` (children, their children…). */
async function descendants(pid: number): Promise<number[]> {
  const out: number[] = [];
  let tasks: string[] = [];
  try {
    tasks = await readdir(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const task of tasks) {
    const children = await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '');
    for (const child of children.split(/\s+/).filter(Boolean).map(Number)) {
      out.push(child, ...(await descendants(child)));
    }
  }
  return out;
}

/** Samples peak resident sizes until stopped: this process, the pdf.js children, the emulators. */
function samplePeaks() {
  const peaks = { service: 0, child: 0, emulators: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      const self = await resident(process.pid);
      if (self) peaks.service = Math.max(peaks.service, self.rss);
      for (const pid of await descendants(process.pid)) {
        const p = await resident(pid);
        if (!p) continue;
        if (p.cmd.includes('extract-child')) peaks.child = Math.max(peaks.child, p.hwm);
        else if (p.cmd.includes('emulators')) peaks.emulators = Math.max(peaks.emulators, p.rss);
      }
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
    }
  })();
  return {
    peaks,
    async stop() {
      running = false;
      await loop;
      return peaks;
    },
  };
}

export const largePdfBench: Benchmark = {
  name: 'large-pdf',
  title: 'one large PDF (LARGE_PDF_MB, default 50) uploaded in parts and ingested: wall time and peak memory',
  async run(ctx) {
    const target = sizeMb() * MiB;
    // Pages of a 4 MiB image each, a little under so that the file stays within `target`.
    const pages = Math.max(1, Math.floor(target / (4 * MiB)));
    const imageBytesPerPage = Math.floor(target / pages) - 16 * 1024;
    const path = join(ctx.tmpDir, 'large.pdf');
    ctx.log(`large-pdf: writing ${pages} pages (${(target / MiB).toFixed(0)} MiB) to ${path}`);
    const t0 = performance.now();
    await pipeline(
      Readable.from(largePdf({ bytes: pages * imageBytesPerPage, imageBytesPerPage })),
      createWriteStream(path),
    );
    const writeMs = performance.now() - t0;
    const size = (await stat(path)).size;

    const svc = await startBenchService({
      PDF_MAX_BYTES: String(Math.max(size, 25 * MiB)),
      UPLOAD_PART_BYTES: String(8 * MiB),
      PDF_FETCH_TIMEOUT_MS: String(15 * 60 * 1000),
      PDF_EXTRACT_DOCUMENT_MS: String(15 * 60 * 1000),
      PDF_SYNC_WAIT_MS: '0',
    });
    try {
      const { token } = await svc.signIn('bench-large-pdf@example.com');
      const before = (await resident(process.pid))!.rss;
      const sampler = samplePeaks();

      ctx.log('large-pdf: uploading');
      const t1 = performance.now();
      const created = await svc.api('POST', '/upload/multipart', token, {
        fileName: 'large.pdf',
        contentType: 'application/pdf',
        size,
      });
      if (created.status !== 201) throw new Error(`POST /upload/multipart: ${created.status} ${created.body}`);
      const { fileId, parts, partSize, downloadUrl } = created.json.data;
      const file = await open(path, 'r');
      const etags: string[] = [];
      try {
        for (const part of parts as { partNumber: number; size: number; url: string }[]) {
          const body = Buffer.allocUnsafe(part.size);
          await file.read(body, 0, part.size, (part.partNumber - 1) * partSize);
          const put = await fetch(part.url, { method: 'PUT', body });
          if (put.status !== 200) throw new Error(`PUT part ${part.partNumber}: ${put.status}`);
          etags.push(put.headers.get('etag') ?? '');
        }
      } finally {
        await file.close();
      }
      const completed = await svc.api('POST', `/upload/${fileId}/complete`, token, {
        parts: etags.map((etag, i) => ({ partNumber: i + 1, etag })),
      });
      if (completed.status !== 200)
        throw new Error(`POST /upload/{fileId}/complete: ${completed.status} ${completed.body}`);
      const uploadMs = performance.now() - t1;

      ctx.log('large-pdf: ingesting');
      const t2 = performance.now();
      const started = await svc.api('POST', '/message/pdf', token, { url: downloadUrl, fileId });
      if (started.status !== 200 && started.status !== 202)
        throw new Error(`POST /message/pdf: ${started.status} ${started.body}`);
      let state: { status: string; pages?: number; failure?: unknown } | undefined;
      for (;;) {
        const res = await svc.api('GET', `/message/pdf/${fileId}`, token);
        state = res.json?.data?.embeddingsData;
        if (state?.status === 'completed' || state?.status === 'failed') break;
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      const ingestMs = performance.now() - t2;
      const peaks = await sampler.stop();
      if (state.status === 'failed') throw new Error(`the large PDF failed: ${JSON.stringify(state.failure)}`);

      const mb = size / MiB;
      return {
        checks: [
          info('file size', mb, 'MiB'),
          info('pages', pages, 'pages'),
          info('write the PDF to disk (generated as it streams)', writeMs, 'ms'),
          info('upload: POST /upload/multipart, PUT the parts, complete', uploadMs, 'ms'),
          info('ingestion: POST /message/pdf → completed', ingestMs, 'ms'),
          info('ingestion throughput', mb / (ingestMs / 1000), 'MiB/s'),
          info('service process: resident before the upload', before, 'MiB'),
          info('service process: peak resident during upload and ingestion', peaks.service, 'MiB'),
          info('service process: peak growth / file size', (peaks.service - before) / mb, 'MiB per MiB'),
          info('pdf.js child: peak resident', peaks.child, 'MiB'),
          info('pdf.js child: peak resident / file size', peaks.child / mb, 'MiB per MiB'),
          info('emulators process (local S3 holds the objects): peak resident', peaks.emulators, 'MiB'),
        ],
        notes: [
          `LARGE_PDF_MB=${sizeMb()}; the service's process includes the bench's own upload (a part at a time); the emulators' figure is the local S3 keeping its objects in memory.`,
        ],
      };
    } finally {
      await svc.stop();
    }
  },
};
