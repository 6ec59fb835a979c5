import type { Chunk } from '../files/chunk-repository.ts';
import type { ProcessingFile } from '../files/file-record.ts';
import { logger } from '../observability/logger.ts';
import { asError } from '../errors.ts';
import { PermanentFailure } from '../files/failures.ts';
import { embedPart, type EmbedContext } from './embed-stage.ts';
import { writePart, type PartSink } from './part-writer.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import type { RunMessage } from './run-stage.ts';

// pdf-extract embeds the parts it makes itself, in the invocation that read them (docs/DECISIONS.md
// "Ingestion against LangChain.js"): the embed stage's own code (embedPart), without the part's
// file, its message, the queue hop and the record read of a pdf-embed invocation. The stage stays
// for what this does not take: a part past the first MAX_INLINE_PARTS, a part when too little of
// the invocation is left, and any part whose inline embedding failed but may succeed again (its
// file and message are written then, so pdf-embed retries it under its own policy); a request the
// provider refused fails the run here, as pdf-embed would. Counting is the same conditional
// write either way, so a part embedded here and again by a redelivery counts once.

/** Parts one invocation embeds itself at most; the rest go to pdf-embed (their own invocations). */
const MAX_INLINE_PARTS = 4;
/** Time an invocation keeps for its own end when it embeds inline; below it, parts go to pdf-embed. */
const INLINE_RESERVE_MS = 60_000;

export function inlineEmbedSink(
  deps: PipelineDeps,
  run: RunMessage,
  record: ProcessingFile,
  ctx: EmbedContext,
  remainingMs: () => number | undefined,
): PartSink {
  let inlined = 0;
  return async (part: number, chunks: Chunk[]) => {
    if (record.doneParts?.has(part)) return; // counted by an earlier attempt of this message
    if (inlined >= MAX_INLINE_PARTS || (remainingMs() ?? Infinity) < INLINE_RESERVE_MS)
      return writePart(deps, run, part, chunks);
    inlined++;
    try {
      await embedPart(deps, { fileId: run.fileId, runId: run.runId, part, chunks }, record, ctx);
    } catch (err) {
      if (err instanceof PermanentFailure) throw err; // the provider refused the request: it would again
      logger.warn('inline embedding failed: the part goes to pdf-embed', {
        fileId: run.fileId,
        runId: run.runId,
        part,
        error: asError(err),
      });
      await writePart(deps, run, part, chunks);
    }
  };
}
