import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { createHash, randomBytes } from 'node:crypto';
import { createId } from '../shared/ids.ts';
import { projectRoot } from '../infra/local/runtime.ts';
import { makeTextPdf } from '../test/helpers/make-pdf.ts';
import type { Benchmark } from './lib/context.ts';
import { missingFiles } from './lib/context.ts';
import { absoluteCheck, info, type Check } from './lib/report.ts';
import { type BenchService, uploadPdf } from './lib/service.ts';
import { BASELINE, BUNDLE_ENV, bundleOf, childError } from './cold-start.ts';

// Memory: the peak RSS of pdf-extract working on the largest fixture PDF (tracemonkey.pdf), in
// a child process running the function's bundle exactly as Lambda would (import, one SQS event),
// against the service's emulators. The file is brought to where pdf-fetch leaves it with the
// pipeline's own writers (start the run, store the PDF, advance to extract); the rest of the
// pipeline then completes it, which checks that the child really extracted it.
// Target: ≤ 512 MB. For scale: the same on the generated 300-page PDF, and the bundle imported
// without any work.

const run = promisify(execFile);
const TARGET_MB = 512;
const FIXTURES = join(projectRoot, 'test/fixtures/pdfs');

interface ChildFigures {
  result: { batchItemFailures?: unknown[] } | null;
  ms: number;
  afterImportKb: number;
  maxRssKb: number;
  vmHwmKb?: number;
}

async function invoke(bundle: string, event: unknown, env: Record<string, string>): Promise<ChildFigures> {
  try {
    const { stdout } = await run(
      process.execPath,
      [join(projectRoot, 'bench/lib/invoke-child.mjs'), pathToFileURL(bundle).href, JSON.stringify(event)],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
        timeout: 300_000,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    return JSON.parse(stdout) as ChildFigures;
  } catch (err) {
    throw new Error(`invoking ${bundle} failed: ${childError(err)}`);
  }
}

/** Upload through the API, then the state pdf-fetch leaves a file in, with the pipeline's writers. */
async function fileReadyForExtract(svc: BenchService, bytes: Uint8Array, fileName: string) {
  const { FileRepository } = await import('#shared/files/file-repository.ts');
  const { FileStorage, sourceKey } = await import('#shared/files/storage.ts');
  const { dynamo, tableName } = await import('#shared/clients.ts');
  const { s3Client } = await import('#shared/s3-client.ts');
  const user = await svc.signIn(`bench-memory-${randomBytes(4).toString('hex')}@example.com`);
  const { fileId, downloadUrl } = await uploadPdf(svc, user.token, bytes, fileName);

  const files = new FileRepository(dynamo(), tableName());
  const storage = new FileStorage(s3Client(), svc.runtime.bucket);
  const runId = createId();
  const now = () => new Date().toISOString();
  if (!(await files.startRun({ id: fileId, userId: user.userId, runId, url: downloadUrl, force: false, now: now() })))
    throw new Error('startRun refused');
  const key = sourceKey(fileId, runId);
  await storage.put(key, bytes, 'application/pdf');
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (!(await files.recordDownload(fileId, runId, { sha256, size: bytes.byteLength }, now()))) {
    throw new Error('recordDownload refused');
  }
  const message = { fileId, runId, key };
  const event = {
    Records: [
      {
        messageId: createId(),
        receiptHandle: 'bench',
        body: JSON.stringify(message),
        attributes: {
          ApproximateReceiveCount: '1',
          SentTimestamp: String(Date.now()),
          SenderId: 'bench',
          ApproximateFirstReceiveTimestamp: String(Date.now()),
        },
        messageAttributes: {},
        md5OfBody: createHash('md5').update(JSON.stringify(message)).digest('hex'),
        eventSource: 'aws:sqs',
        eventSourceARN: svc.runtime.queues['pdf-extract'].arn,
        awsRegion: 'us-east-1',
      },
    ],
  };
  return { fileId, token: user.token, event };
}

async function waitCompleted(svc: BenchService, fileId: string, token: string): Promise<any> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const res = await svc.api('GET', `/message/pdf/${fileId}`, token);
    const data = res.json?.data?.embeddingsData;
    if (data?.status === 'completed') return data;
    if (data?.status === 'failed') throw new Error(`the file failed: ${JSON.stringify(data.failure)}`);
    if (Date.now() > deadline) throw new Error(`the file did not complete: ${res.body}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const memory: Benchmark = {
  name: 'memory',
  title: 'peak RSS of pdf-extract (its bundle, in a child process) on the largest fixture PDF',
  requires: () => missingFiles('functions/pdf-extract.ts', 'test/fixtures/pdfs/tracemonkey.pdf'),
  async run(ctx) {
    const svc = await ctx.service();
    const bundle = await bundleOf(ctx.tmpDir, 'pdf-extract');
    const env = { ...svc.runtime.env, LOG_LEVEL: 'SILENT' };

    const documents: { label: string; bytes: Uint8Array; pages?: number }[] = [
      { label: 'tracemonkey.pdf (largest fixture)', bytes: await readFile(join(FIXTURES, 'tracemonkey.pdf')) },
      { label: 'generated 300-page PDF', bytes: await makeTextPdf(300), pages: 300 },
    ];
    // For scale: the smallest function there is, imported and called in the same way.
    const base = await invoke(await bundleOf(ctx.tmpDir, BASELINE.name), {}, BUNDLE_ENV);
    const baseMb = base.maxRssKb / 1024;
    const checks: Check[] = [];
    const rows: (string | number)[][] = [];
    for (const [i, doc] of documents.entries()) {
      ctx.log(`memory: pdf-extract on ${doc.label}`);
      const ready = await fileReadyForExtract(svc, doc.bytes, `memory-${i}.pdf`);
      const figures = await invoke(bundle, ready.event, env);
      if (figures.result?.batchItemFailures?.length)
        throw new Error(`pdf-extract reported a failure: ${JSON.stringify(figures.result)}`);
      const done = await waitCompleted(svc, ready.fileId, ready.token);
      const peakMb = figures.maxRssKb / 1024;
      const vsBase = { baseline: baseMb, ratio: peakMb / baseMb };
      if (i === 0) checks.push(absoluteCheck(`peak RSS, ${doc.label}`, peakMb, 'MB', { max: TARGET_MB }, vsBase));
      else checks.push(info(`peak RSS, ${doc.label}`, peakMb, 'MB', vsBase));
      rows.push([
        doc.label,
        doc.bytes.byteLength / 1e6,
        done.pages,
        done.chunks,
        figures.ms,
        figures.afterImportKb / 1024,
        peakMb,
        (figures.vmHwmKb ?? Number.NaN) / 1024,
      ]);
    }
    return {
      checks,
      details: [
        {
          title: 'pdf-extract, one invocation per document',
          header: [
            'document',
            'MB',
            'pages',
            'chunks',
            'invocation ms',
            'RSS after import MB',
            'peak RSS MB',
            'VmHWM MB',
          ],
          rows,
        },
      ],
      notes: [
        'Peak RSS = process.resourceUsage().maxRSS at the end of the invocation (VmHWM agrees); the child runs the minified bundle with node, as Lambda does, with no --max-old-space-size.',
        'Baseline: the DynamoDB-client-only bundle (bench/fixtures/baseline-handler.ts) imported and called once the same way: what any Node function costs.',
      ],
    };
  },
};
