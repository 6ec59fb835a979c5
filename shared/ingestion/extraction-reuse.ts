import '../config/chunking.ts';
import { isoNow } from '../clock.ts';
import type { Chunk } from '../files/chunk-repository.ts';
import type { ProcessingFile } from '../files/file-record.ts';
import { logger } from '../observability/logger.ts';
import { mapLimit } from '../map-limit.ts';
import { namesPageBlock, keptRunPrefix } from '../files/storage.ts';
import { chunkerId } from './chunker.ts';
import type { ExtractMessage } from './queue-messages.ts';
import { partWriter } from './part-writer.ts';
import type { PipelineDeps } from './pipeline-deps.ts';

// Identical bytes are never extracted or recognised twice (docs/DECISIONS.md "Extraction reuse"):
// a completed file of the same user with the same SHA-256 and chunker already holds the chunks
// that pdf-extract and pdf-ocr would make of them (text, pages, OCR pages), so a new run of those
// bytes takes them as they are, writes its parts from them and goes straight to embedding (where
// pdf-embed reuses that file's embeddings too, when the model matches). `force` extracts again.

/**
 * The run's record after it took an earlier file's chunks (undefined: stale), or `none` when
 * there is nothing to take: extract as usual.
 */
export async function reuseExtraction(
  deps: PipelineDeps,
  msg: ExtractMessage,
  record: ProcessingFile,
): Promise<{ record: ProcessingFile | undefined } | 'none'> {
  if (record.forced || !record.sha256) return 'none';
  const { config } = deps;
  const chunker = chunkerId(config.CHUNK_TOKENS, config.CHUNK_OVERLAP_TOKENS);
  const earlier = await deps.files.findExtracted(record.userId, record.sha256, chunker, record.id);
  if (!earlier || earlier.pages === undefined) return 'none';
  const chunks: Chunk[] = [];
  for await (const page of deps.chunks.list(earlier.id)) {
    for (const { n, fileId: _f, runId: _r, embedding: _e, ...chunk } of page) chunks.push({ index: n, ...chunk });
  }
  // A file deleted or re-ingested meanwhile may have lost chunks: extract instead.
  if (chunks.length !== earlier.chunks || chunks.some((c, i) => c.index !== i)) return 'none';
  const parts = partWriter(deps, msg);
  parts.chunks(chunks);
  const [written] = await Promise.all([parts.finish(), copyPageTexts(deps, earlier, record.id, msg.runId)]);
  logger.info('extraction reused', { fileId: record.id, from: earlier.id, chunks: written.chunks });
  return {
    record: await deps.files.recordExtraction(
      record.id,
      msg.runId,
      {
        next: 'embed',
        ...(earlier.format && { format: earlier.format }),
        pages: earlier.pages,
        textPages: earlier.textPages ?? 0,
        unreadablePages: earlier.unreadablePages ?? 0,
        ocrPages: earlier.ocrPages ?? 0,
        chunks: written.chunks,
        partsTotal: written.parts,
        extractedFrom: earlier.id,
      },
      isoNow(deps.clock),
    ),
  };
}

/**
 * The page texts the earlier run kept (the texts citations' offsets index, read by the page
 * route), copied beside this run's: the chunks taken point into them.
 */
async function copyPageTexts(
  deps: PipelineDeps,
  earlier: { id: string; runId: string },
  fileId: string,
  runId: string,
): Promise<void> {
  const from = keptRunPrefix(earlier.id, earlier.runId);
  const to = keptRunPrefix(fileId, runId);
  const keys = (await deps.storage.listKeys(from)).filter(namesPageBlock);
  await mapLimit(keys, 8, (key) => deps.storage.copy(key, `${to}${key.slice(from.length)}`));
}
