import { createHash } from 'node:crypto';
import { sourceKey } from '../files/storage.ts';
import { PermanentFailure } from '../files/failures.ts';
import { downloadStream, MAX_REDIRECTS, type FetchPolicy } from './guarded-fetch.ts';
import type { FetchMessage } from './messages.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import { orStale, runStage } from './current-run.ts';
import { isoNow } from '../clock.ts';

// pdf-fetch: the PDF from its URL into the bucket.

function fetchPolicy(c: PipelineDeps['config'], remainingMs?: number): FetchPolicy {
  const budget = remainingMs !== undefined ? Math.max(1000, remainingMs - 10_000) : c.PDF_FETCH_TIMEOUT_MS;
  return {
    allowLoopback: c.PDF_ALLOW_LOOPBACK,
    maxBytes: c.PDF_MAX_BYTES,
    timeoutMs: Math.min(c.PDF_FETCH_TIMEOUT_MS, budget),
    maxRedirects: MAX_REDIRECTS,
    minBytesPerSecond: c.PDF_FETCH_MIN_BYTES_PER_SECOND,
    slowWindowMs: c.PDF_FETCH_SLOW_WINDOW_MS,
  };
}

/** How much of the start of a file a reader looks in for the `%PDF-` header. */
const HEADER_WINDOW = 1024;

/** True when the bytes look like a PDF: `%PDF-` within the first KiB, as readers accept it. */
function looksLikePdf(head: Buffer): boolean {
  return head.subarray(0, HEADER_WINDOW).includes('%PDF-');
}

const notPdf = () => new PermanentFailure('NOT_PDF', 'The URL did not return a PDF (no %PDF- header)');

interface FetchContext {
  remainingMs?: number;
}

/**
 * The downloaded bytes on their way to the bucket: the first KiB checked for `%PDF-` before
 * anything is stored, every byte hashed and counted as it passes (docs/DECISIONS.md, Large PDFs:
 * nothing holds the whole file).
 */
async function* checkedPdf(
  body: AsyncIterable<Buffer>,
  seen: { sha256: ReturnType<typeof createHash>; size: number },
): AsyncGenerator<Buffer> {
  let head: Buffer[] | undefined = [];
  let headBytes = 0;
  for await (const chunk of body) {
    seen.sha256.update(chunk);
    seen.size += chunk.length;
    if (!head) {
      yield chunk;
      continue;
    }
    head.push(chunk);
    headBytes += chunk.length;
    if (headBytes < HEADER_WINDOW) continue;
    const start = Buffer.concat(head, headBytes);
    head = undefined;
    if (!looksLikePdf(start)) throw notPdf();
    yield start;
  }
  if (head) {
    const start = Buffer.concat(head, headBytes);
    if (!looksLikePdf(start)) throw notPdf();
    yield start;
  }
}

/**
 * Steps: download through the SSRF guard with byte counting, streamed: the `%PDF-` magic checked
 * on the first KiB, the SHA-256 (pdf-embed reuses the embeddings of the same bytes) and the
 * bucket's multipart upload fed part by part → record the download, advance to extract, queue it.
 */
export const runFetch = runStage(async (deps, msg: FetchMessage, record, ctx: FetchContext) => {
  if (!record.sourceUrl) throw new PermanentFailure('DOWNLOAD_FAILED', 'The file has no URL to download');

  const seen = { sha256: createHash('sha256'), size: 0 };
  const key = sourceKey(record.id, msg.runId);
  const body = downloadStream(record.sourceUrl, fetchPolicy(deps.config, ctx.remainingMs));
  await deps.storage.putLarge(key, checkedPdf(body, seen), 'application/pdf');
  const sha256 = seen.sha256.digest('hex');
  orStale(await deps.files.recordDownload(record.id, msg.runId, { sha256, size: seen.size }, isoNow(deps.clock)));
  await deps.queues.send('pdf-extract', [{ fileId: record.id, runId: msg.runId, key }]);
});
