import { performance } from 'node:perf_hooks';
import { makePdfFromLines } from '../test/helpers/make-pdf.ts';
import type { Benchmark } from './lib/context.ts';
import { info } from './lib/report.ts';
import { type BenchService, uploadPdf } from './lib/service.ts';

// Bulk ingestion: one user uploads and submits 100 one-page PDFs at once (each its own bytes, so
// nothing is reused), and another user submits one PDF right after them; wall time from the
// first POST /upload to the burst's last completion, and where the other user's PDF finished
// among the burst's (docs/DECISIONS.md "Fair bulk ingestion"). The service's default limits:
// PDF_MAX_IN_FLIGHT_PER_USER 3 in the pipeline at once, the rest queued.

const BURST = 100;
const POLL_MS = 200;

async function submit(svc: BenchService, token: string, bytes: Uint8Array, fileName: string): Promise<string> {
  const { fileId, downloadUrl } = await uploadPdf(svc, token, bytes, fileName);
  const started = await svc.api('POST', '/message/pdf', token, { url: downloadUrl, fileId });
  if (started.status !== 200 && started.status !== 202)
    throw new Error(`POST /message/pdf: ${started.status} ${started.body}`);
  return fileId;
}

/** The user's files that completed, with when (GET /upload, 100 a page); throws on a failed one. */
async function completions(svc: BenchService, token: string): Promise<Map<string, number>> {
  const res = await svc.api('GET', '/upload?limit=100', token);
  const done = new Map<string, number>();
  for (const f of res.json.data) {
    if (f.status === 'failed') throw new Error(`${f.fileId} failed: ${JSON.stringify(f.failure)}`);
    if (f.status === 'completed') done.set(f.fileId, Date.parse(f.completedAt));
  }
  return done;
}

export const bulkIngestion: Benchmark = {
  name: 'bulk-ingestion',
  title: `${BURST} one-page PDFs submitted at once by one user, and one PDF of another user sent after them`,
  async run(ctx) {
    const svc = await ctx.service();
    const pdfs = await Promise.all(
      Array.from({ length: BURST + 1 }, (_, i) =>
        makePdfFromLines([[`Bulk document ${i}: the quarterly report for region ${i} lists ${i * 7} shipments.`]]),
      ),
    );
    const alice = await svc.signIn('bench-bulk-alice@example.com');
    const bob = await svc.signIn('bench-bulk-bob@example.com');
    ctx.log(`bulk-ingestion: submitting ${BURST} PDFs at once`);
    const t0 = performance.now();
    const wall0 = Date.now();
    await Promise.all(pdfs.slice(0, BURST).map((bytes, i) => submit(svc, alice.token, bytes, `bulk-${i}.pdf`)));
    const acceptedMs = performance.now() - t0;
    const bobId = await submit(svc, bob.token, pdfs[BURST]!, 'single.pdf');
    let bobDone: number | undefined;
    let aliceDone = new Map<string, number>();
    while (aliceDone.size < BURST || bobDone === undefined) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      aliceDone = await completions(svc, alice.token);
      bobDone ??= (await completions(svc, bob.token)).get(bobId);
    }
    const times = [...aliceDone.values()].sort((a, b) => a - b);
    const wallMs = times.at(-1)! - wall0;
    const before = times.filter((t) => t < bobDone!).length;
    return {
      checks: [
        info(`${BURST} PDFs: all accepted (uploads, PUTs, POST /message/pdf)`, acceptedMs, 'ms'),
        info(`${BURST} PDFs: first request → last completed`, wallMs, 'ms'),
        info('per PDF (wall / count)', wallMs / BURST, 'ms'),
        info("other user's PDF: completed after its request", bobDone! - wall0 - acceptedMs, 'ms'),
        info("burst PDFs completed before the other user's", before, `of ${BURST}`),
      ],
    };
  },
};
