import { createHash } from 'node:crypto';
import { sourceKey } from '../files/storage.ts';
import { PermanentFailure } from '../files/failures.ts';
import { download, MAX_REDIRECTS, type FetchPolicy } from './guarded-fetch.ts';
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

/** True when the bytes look like a PDF: `%PDF-` within the first KiB, as readers accept it. */
function looksLikePdf(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024)).includes('%PDF-');
}

interface FetchContext {
  remainingMs?: number;
}

/**
 * Steps: download through the SSRF guard with byte counting → check the `%PDF-` magic → SHA-256
 * (pdf-embed reuses the embeddings of the same bytes) → store the PDF, advance to extract, queue it.
 */
export const runFetch = runStage(async (deps, msg: FetchMessage, record, ctx: FetchContext) => {
  if (!record.sourceUrl) throw new PermanentFailure('DOWNLOAD_FAILED', 'The file has no URL to download');

  const bytes = await download(record.sourceUrl, fetchPolicy(deps.config, ctx.remainingMs));
  if (!looksLikePdf(bytes)) throw new PermanentFailure('NOT_PDF', 'The URL did not return a PDF (no %PDF- header)');
  const sha256 = createHash('sha256').update(bytes).digest('hex');

  const key = sourceKey(record.id, msg.runId);
  await deps.storage.putLarge(key, bytes, 'application/pdf');
  orStale(
    await deps.files.recordDownload(record.id, msg.runId, { sha256, size: bytes.byteLength }, isoNow(deps.clock)),
  );
  await deps.queues.send('pdf-extract', [{ fileId: record.id, runId: msg.runId, key }]);
});
