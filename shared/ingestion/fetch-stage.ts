import '../config/pdf.ts';
import { createHash } from 'node:crypto';
import { HEAD_BYTES, READ_FORMATS, sniffHead, type HeadKind } from '../readers/sniff.ts';
import { sourceKey } from '../files/storage.ts';
import { PermanentFailure } from '../files/failures.ts';
import { downloadStream, MAX_REDIRECTS, type FetchPolicy } from '../net/guarded-fetch.ts';
import type { FetchMessage } from './queue-messages.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import { orStale, runStage } from './run-stage.ts';
import { isoNow } from '../clock.ts';

// pdf-fetch: the document from its URL into the bucket.

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

const unsupported = (what: string) =>
  new PermanentFailure(
    'UNSUPPORTED_TYPE',
    `The URL returned ${what}, not a document this service reads (${READ_FORMATS})`,
  );

interface FetchContext {
  remainingMs?: number;
}

/**
 * The downloaded bytes on their way to the bucket: the first KiB sniffed (sniff.ts) before
 * anything is stored, every byte hashed and counted as it passes (docs/DECISIONS.md, Large PDFs:
 * nothing holds the whole file). `seen.kind` says what the head is.
 */
async function* checkedDocument(
  body: AsyncIterable<Buffer>,
  seen: { sha256: ReturnType<typeof createHash>; size: number; kind?: HeadKind },
): AsyncGenerator<Buffer> {
  let head: Buffer[] | undefined = [];
  let headBytes = 0;
  const checked = (start: Buffer) => {
    const sniffed = sniffHead(start);
    if ('refused' in sniffed) throw unsupported(sniffed.refused);
    seen.kind = sniffed.kind;
    return start;
  };
  for await (const chunk of body) {
    seen.sha256.update(chunk);
    seen.size += chunk.length;
    if (!head) {
      yield chunk;
      continue;
    }
    head.push(chunk);
    headBytes += chunk.length;
    if (headBytes < HEAD_BYTES) continue;
    const start = Buffer.concat(head, headBytes);
    head = undefined;
    yield checked(start);
  }
  if (head) {
    if (!headBytes) throw unsupported('an empty body');
    yield checked(Buffer.concat(head, headBytes));
  }
}

/**
 * Steps: download through the SSRF guard with byte counting, streamed: the head sniffed
 * on the first KiB, the SHA-256 (pdf-embed reuses the embeddings of the same bytes) and the
 * bucket's multipart upload fed part by part → record the download, advance to extract, queue it.
 */
export const runFetch = runStage(async (deps, msg: FetchMessage, record, ctx: FetchContext) => {
  if (!record.sourceUrl) throw new PermanentFailure('DOWNLOAD_FAILED', 'The file has no URL to download');

  const seen: Parameters<typeof checkedDocument>[1] = { sha256: createHash('sha256'), size: 0 };
  const key = sourceKey(record.id, msg.runId);
  const body = downloadStream(record.sourceUrl, fetchPolicy(deps.config, ctx.remainingMs));
  await deps.storage.putLarge(key, checkedDocument(body, seen), 'application/octet-stream');
  const sha256 = seen.sha256.digest('hex');
  orStale(
    await deps.files.recordDownload(
      record.id,
      msg.runId,
      { sha256, size: seen.size, format: seen.kind === 'pdf' ? 'pdf' : undefined },
      isoNow(deps.clock),
    ),
  );
  await deps.queues.send('pdf-extract', [{ fileId: record.id, runId: msg.runId, key }]);
});
