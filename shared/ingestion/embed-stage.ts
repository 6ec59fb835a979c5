import '../config/chunking.ts';
import { AiProviderError } from '../ai/errors.ts';
import { logger } from '../observability/logger.ts';
import type { AiProvider } from '../ai/types.ts';
import type { ChunkItem } from '../files/chunk-repository.ts';
import { mapLimit } from '../dynamo.ts';
import type { FileRecord, ProcessingFile } from '../files/file-record.ts';
import { binaryToVector, vectorToBinary } from '../retrieval/packed-vectors.ts';
import { buildLexicalIndexAside, lexicalText } from '../retrieval/lexical-index.ts';
import { chunkerId } from './chunker.ts';
import { PermanentFailure, RetryableFailure } from '../files/failures.ts';
import { partFileSchema, type EmbedMessage, type PartFile } from './queue-messages.ts';
import { runStage } from './run-stage.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import { packBatches } from '../batches.ts';
import { isoNow } from '../clock.ts';
import { asError } from '../errors.ts';

// pdf-embed: one part's chunks → embeddings (as few requests as the provider's limits allow,
// a bounded number at once; the provider retries 429/5xx with backoff) → chunk items with
// float32 Binary embeddings → the part's packed vectors (with its BM25 index) → the counter; the last part completes
// the file.

function embeddingFailure(err: unknown): Error {
  if (err instanceof AiProviderError) {
    const status = err.details.status;
    // A request the provider refuses as invalid will be refused again.
    if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 409 && status !== 429) {
      return new PermanentFailure('EMBEDDING_FAILED', `The embedding provider refused the request (${status})`);
    }
    return new RetryableFailure('EMBEDDING_FAILED', `Embedding failed: ${err.kind}`, { cause: err });
  }
  return new RetryableFailure('EMBEDDING_FAILED', 'Embedding failed', { cause: err });
}

export interface EmbedContext {
  provider: AiProvider;
  /** Concurrent embedding requests within one part. */
  concurrency: number;
  estimateTokens: (text: string) => number;
  /** Charges the file owner's daily token budget for embeddings made (shared/limits/). */
  chargeTokens?: (userId: string, tokens: number) => Promise<void>;
}

/**
 * Charges the file owner for tokens embedded and counts them in the owner's usage; a failure to
 * charge must not fail the part.
 */
async function charge(
  deps: PipelineDeps,
  ctx: EmbedContext,
  userId: string,
  fileId: string,
  tokens: number,
): Promise<void> {
  if (tokens <= 0) return;
  await Promise.all([
    ctx
      .chargeTokens?.(userId, tokens)
      .catch((err: unknown) => logger.error('could not charge embedding tokens', { fileId, error: asError(err) })),
    deps.usage
      .addTokens(userId, { [ctx.provider.embeddingModel]: tokens })
      .catch((err: unknown) => logger.error('could not count embedding tokens', { fileId, error: asError(err) })),
  ]);
}

type ReusableSource = NonNullable<Awaited<ReturnType<PipelineDeps['files']['findReusable']>>>;

/** A completed file of this user with the same bytes, embedding model and chunker (none when forced: ingest afresh). */
async function reusableSource(deps: PipelineDeps, record: ProcessingFile, provider: AiProvider) {
  if (record.forced || !record.sha256) return undefined;
  const config = deps.config;
  const chunker = chunkerId(config.CHUNK_TOKENS, config.CHUNK_OVERLAP_TOKENS);
  return deps.files.findReusable(record.userId, record.sha256, provider.embeddingModel, chunker, record.id);
}

/**
 * The embeddings this user already paid for: a completed file with the same bytes (SHA-256),
 * embedding model and dimensions, and chunker. Chunking is deterministic, so its chunk n is this
 * file's chunk n; each is used only when its text is identical.
 */
async function reusableVectors(
  deps: PipelineDeps,
  source: ReusableSource | undefined,
  part: PartFile,
  provider: AiProvider,
) {
  const vectors = new Map<number, Float32Array>();
  if (!source || source.dimensions !== provider.embeddingDimensions) return { vectors };
  const texts = new Map(part.chunks.map((ch) => [ch.index, ch.text]));
  for (const item of await deps.chunks.getMany(source.id, [...texts.keys()])) {
    if (item.runId === source.runId && texts.get(item.n) === item.text)
      vectors.set(item.n, binaryToVector(item.embedding));
  }
  return { vectors, from: vectors.size ? source.id : undefined };
}

/**
 * Steps: a part already counted only leaves completion to the runner → read the part (and look
 * for a completed file of the same bytes meanwhile) → embedPart; the runner completes the file
 * when it was the last.
 */
export const runEmbed = runStage(async (deps, msg: EmbedMessage, record, ctx: EmbedContext) => {
  if (record.doneParts?.has(msg.part)) return record;
  // Looked up while the part is read: neither needs the other.
  const source = reusableSource(deps, record, ctx.provider);
  source.catch(() => undefined); // awaited in embedPart; never an unhandled rejection meanwhile
  const part = partFileSchema.parse(JSON.parse(Buffer.from(await deps.storage.get(msg.key)).toString('utf8')));
  return embedPart(deps, part, record, ctx, source);
});

/**
 * One part's chunks, the embed stage's work, also done by pdf-extract for the parts it makes
 * (inline-embed.ts): the embeddings of the same bytes this user already has, else embed → write
 * chunk items and the part's packed vectors → count the part (once). The record after the count;
 * when the count was refused, the record as it is now.
 */
export async function embedPart(
  deps: PipelineDeps,
  part: PartFile,
  record: ProcessingFile,
  ctx: EmbedContext,
  source: Promise<ReusableSource | undefined> = reusableSource(deps, record, ctx.provider),
): Promise<FileRecord | undefined> {
  const { provider } = ctx;
  const reused = await reusableVectors(deps, await source, part, provider);
  const toEmbed = part.chunks.filter((c) => !reused.vectors.has(c.index));
  // Within the provider's limits, by its own token estimate.
  const batches = packBatches(
    toEmbed,
    { maxItems: provider.embeddingLimits.maxInputs, maxWeight: provider.embeddingLimits.maxTokens },
    (c) => ctx.estimateTokens(c.text),
  );
  let tokens = 0;
  const embedding = mapLimit(batches, ctx.concurrency, async (batch) => {
    let result: Awaited<ReturnType<AiProvider['embed']>>;
    try {
      result = await provider.embed(batch.map((c) => c.text));
    } catch (err) {
      throw embeddingFailure(err);
    }
    // Charged as soon as the provider answers: the tokens are spent whether or not the run still
    // counts the part (the file may have been deleted meanwhile, or the part fail later).
    await charge(deps, ctx, record.userId, part.fileId, result.tokens);
    if (result.vectors.length !== batch.length)
      throw new RetryableFailure('EMBEDDING_FAILED', 'The embedding provider returned too few vectors');
    tokens += result.tokens;
    return result.vectors;
  });
  // The part's lexical index needs only its texts: built while the requests go out and the
  // provider works on them, not after (docs/DECISIONS.md, Ingestion: where the time goes).
  embedding.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile
  const lexical = await buildLexicalIndexAside(part.chunks.map(lexicalText));
  const embedded = (await embedding).flat();
  const byIndex = new Map(reused.vectors);
  for (const [i, c] of toEmbed.entries()) byIndex.set(c.index, embedded[i]!);
  const vectors = part.chunks.map((c) => byIndex.get(c.index)!);
  const dimensions = vectors[0]?.length ?? provider.embeddingDimensions;
  if (vectors.some((v) => v.length !== dimensions))
    throw new RetryableFailure('EMBEDDING_FAILED', 'Embeddings of different sizes');

  const items: ChunkItem[] = part.chunks.map((c, i) => ({
    fileId: part.fileId,
    runId: part.runId,
    n: c.index,
    text: c.text,
    page: c.page,
    pageEnd: c.pageEnd,
    pageStarts: c.pageStarts,
    tokens: c.tokens,
    ...(c.ocrPages?.length && { ocrPages: c.ocrPages }),
    section: c.section,
    sectionStarts: c.sectionStarts,
    runs: c.runs,
    spans: c.spans,
    ...(c.places && { places: c.places }),
    embedding: vectorToBinary(vectors[i]!),
  }));
  const ref = { userId: record.userId, fileId: part.fileId, runId: part.runId, model: provider.embeddingModel };
  await Promise.all([
    deps.chunks.putMany(items),
    deps.vectors.writePart(
      ref,
      part.part,
      part.chunks.map((c, i) => ({ chunk: c.index, page: c.page, vector: vectors[i]!, text: lexicalText(c) })),
      dimensions,
      lexical,
    ),
  ]);

  const counted = await deps.files.markPartDone(part.fileId, part.runId, part.part, tokens, isoNow(deps.clock), {
    model: provider.embeddingModel,
    dimensions,
    ...(reused.from && { reusedFrom: reused.from }),
  });
  if (counted) return counted;
  // Refused: counted before (a redelivery: completion may be left) or the run ended meanwhile (the
  // runner cleans up the chunk items and objects just written; the vectors written to an index
  // are removed here, where their keys are known).
  // (A run completed since, by a redelivery's twin, keeps them.)
  const now = await deps.files.get(part.fileId);
  if (!now || now.status === 'failed' || now.status === 'uploaded' || now.runId !== part.runId) {
    await deps.vectors.removePart(
      ref,
      part.part,
      part.chunks.map((c) => c.index),
      dimensions,
    );
  }
  return now;
}
