import { checkContentBudget, type ContentLimits } from './content-budget.ts';
import { extractText, type ExtractResult } from './extract.ts';
import { PermanentFailure, type FailureReason } from '../files/failures.ts';
import type { TextVerdict } from './text-quality.ts';
import { asError } from '../errors.ts';

// The extraction child process (see bounded-extract.ts): receives one document over IPC, checks
// its content budget, reads its text with pdf.js page by page and sends each page back as it is
// read; then exits. Whatever the document does to this process (heap exhausted, a V8 fatal
// error, an endless parse) ends here; the parent sees the exit and records a typed failure.

export interface ChildJob {
  data: Uint8Array;
  maxPages: number;
  content: ContentLimits;
}

export type ChildMessage =
  | { type: 'ready'; pages: number }
  | { type: 'page'; page: number; text: string; verdict: TextVerdict }
  | { type: 'done'; result: ExtractResult }
  | { type: 'failed'; reason: FailureReason; message: string }
  | { type: 'error'; message: string };

const send = (message: ChildMessage) =>
  new Promise<void>((resolve, reject) =>
    process.send!(message, undefined, {}, (err) => (err ? reject(err) : resolve())),
  );

async function run(job: ChildJob): Promise<void> {
  // A plain view: a Buffer arrives as a Buffer, which pdf.js refuses.
  const data = new Uint8Array(job.data.buffer, job.data.byteOffset, job.data.byteLength);
  try {
    checkContentBudget(data, job.content);
    const result = await extractText(data, {
      maxPages: job.maxPages,
      onDocument: (pages) => send({ type: 'ready', pages }),
      onPage: (page, text, verdict) => send({ type: 'page', page, text, verdict }),
    });
    await send({ type: 'done', result });
  } catch (err) {
    await send(
      err instanceof PermanentFailure
        ? { type: 'failed', reason: err.reason, message: err.message }
        : { type: 'error', message: asError(err).message },
    ).catch(() => undefined);
  }
  process.exit(0);
}

if (process.send) {
  process.once('message', (job: ChildJob) => void run(job));
  process.once('disconnect', () => process.exit(0)); // the parent gave up on us
}
