import { createId } from '@paralleldrive/cuid2';
import type { AiProvider } from '../../shared/ai/types.ts';
import { AttachmentRepository } from '../../shared/files/attachment-repository.ts';
import { ChunkRepository, type ChunkItem } from '../../shared/files/chunk-repository.ts';
import { FileRepository } from '../../shared/files/file-repository.ts';
import { FileStorage, uploadKey, vectorsKey } from '../../shared/files/storage.ts';
import { encodePacked, packVectors, vectorToBinary } from '../../shared/retrieval/packed-vectors.ts';
import { chunkerId } from '../../shared/pdf/chunker.ts';
import { dynamo, tableName } from '../../shared/clients.ts';
import { s3Client } from '../../shared/s3-client.ts';
import { config } from '../../shared/config.ts';

// Stores a completed file with `texts.length` chunks, attached to a chat, exactly as the pipeline
// leaves one (record, chunk items with float32 embeddings, packed vectors in S3, attachment):
// for tests and benchmarks that need many chunks without ingesting a huge PDF. Uses the
// service's clients, so call it after the runtime has set the environment.

export interface SeedOptions {
  userId: string;
  chatId: string;
  texts: string[];
  provider: AiProvider;
  /** Chunks per page (default 3). */
  chunksPerPage?: number;
  fileName?: string;
}

export async function seedCompletedFile(o: SeedOptions): Promise<{ fileId: string }> {
  const c = config();
  const files = new FileRepository(dynamo(), tableName());
  const chunks = new ChunkRepository(dynamo(), tableName());
  const storage = new FileStorage(s3Client(), c.BUCKET_NAME!);
  const attachments = new AttachmentRepository(dynamo(), tableName());
  const fileId = createId();
  const runId = createId();
  const now = new Date().toISOString();
  const perPage = o.chunksPerPage ?? 3;
  const fileName = o.fileName ?? 'seeded.pdf';
  await files.create({ id: fileId, userId: o.userId, fileName, contentType: 'application/pdf', size: 1, s3Key: uploadKey(o.userId, fileId), status: 'uploaded', createdAt: now, updatedAt: now });
  const record = await files.startRun({ id: fileId, userId: o.userId, runId, url: 'https://seeded.invalid/seeded.pdf', force: false, now });

  const vectors: Float32Array[] = [];
  const { maxInputs } = o.provider.embeddingLimits;
  for (let i = 0; i < o.texts.length; i += maxInputs) vectors.push(...(await o.provider.embed(o.texts.slice(i, i + maxInputs))).vectors);
  const dimensions = vectors[0]!.length;
  const items: ChunkItem[] = o.texts.map((text, n) => {
    const page = Math.floor(n / perPage) + 1;
    return { fileId, runId, n, text, page, pageEnd: page, pageStarts: [[0, page]], tokens: Math.ceil(text.length / 4), embedding: vectorToBinary(vectors[n]!) };
  });
  await chunks.putMany(items);
  const key = vectorsKey(fileId, runId);
  await storage.put(key, encodePacked(packVectors(items.map((it, n) => ({ chunk: n, page: it.page, vector: vectors[n]!, text: it.text })), dimensions)), 'application/octet-stream');
  await files.updateRun(fileId, runId, { pages: Math.ceil(o.texts.length / perPage), chunks: o.texts.length, partsTotal: 0, model: o.provider.embeddingModel, dimensions });
  await files.complete(record!, runId, {
    model: o.provider.embeddingModel,
    dimensions,
    chunker: chunkerId(c.CHUNK_TOKENS, c.CHUNK_OVERLAP_TOKENS),
    sha256: createId(),
    vectorsKey: key,
    now: new Date().toISOString(),
  });
  await files.addChat(fileId, o.chatId);
  await attachments.attach({ chatId: o.chatId, fileId, fileName, userId: o.userId, attachedAt: now });
  return { fileId };
}
