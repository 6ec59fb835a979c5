import { bucketName, dynamo, s3Client, tableName } from '../clients.ts';
import { config } from '../config.ts';
import { logger } from '../logger.ts';
import type { AiProvider, Source } from '../ai/types.ts';
import { AttachmentRepository } from '../files/attachment-repository.ts';
import { ChunkRepository } from '../files/chunk-repository.ts';
import { FileRepository, type FileRecord } from '../files/file-repository.ts';
import { FileStorage } from '../files/storage.ts';
import { binaryToVector, cosine, decodePacked, topK, type PackedVectors } from './packed-vectors.ts';
import { pageAt, pickQuote } from './quote.ts';

// Retrieval for a file chat: the prompt's embedding against the packed vectors of the chat's
// completed files (one S3 object per file, kept in memory by a warm function), then the few
// best candidates read from DynamoDB and re-scored with their exact float32 embeddings.

export interface RetrieveInput {
  chatId: string;
  prompt: string;
  provider: AiProvider;
  /** How many passages to return (default 8). */
  k?: number;
}

export interface RetrievalDeps {
  attachments: AttachmentRepository;
  files: FileRepository;
  chunks: ChunkRepository;
  storage: FileStorage;
  /** Bytes of packed vectors kept in memory. */
  cacheBytes: number;
}

export const DEFAULT_K = 8;
/** Candidates re-scored exactly per passage returned (int8 ranking is close, not exact). */
const OVERSAMPLE = 3;

/** Packed vectors by S3 key (a key names a file's run, so it never goes stale), least recently used first. */
class VectorCache {
  private entries = new Map<string, PackedVectors>();
  private loading = new Map<string, Promise<PackedVectors>>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  async get(key: string, load: () => Promise<PackedVectors>): Promise<PackedVectors> {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    let pending = this.loading.get(key);
    if (!pending) {
      pending = load().finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
      pending.then((packed) => this.put(key, packed), () => undefined);
    }
    return pending;
  }

  private put(key: string, packed: PackedVectors) {
    const size = packed.data.byteLength + packed.count * 16;
    if (size > this.maxBytes || this.entries.has(key)) return;
    this.entries.set(key, packed);
    this.bytes += size;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.data.byteLength + v.count * 16;
    }
  }
}

export function createRetriever(deps: RetrievalDeps) {
  const cache = new VectorCache(deps.cacheBytes);

  /**
   * Steps: the chat's attachments → their records, completed and embedded with this provider's
   * model → embed the prompt while loading the files' packed vectors → rank all chunks → read
   * the best candidates → exact re-score, keep the current run's → the best k, each with a
   * verbatim quote and the page the quote is on.
   */
  return async function retrieve({ chatId, prompt, provider, k = DEFAULT_K }: RetrieveInput): Promise<Source[]> {
    const attachments = await deps.attachments.listByChat(chatId);
    if (!attachments.length || k <= 0) return [];
    const records = await deps.files.getMany(attachments.map((a) => a.fileId));
    const usable = records.filter((f): f is FileRecord & { vectorsKey: string } => {
      if (f.status !== 'completed' || !f.vectorsKey) return false;
      if (f.model !== provider.embeddingModel) {
        logger.warn('file embedded with another model; not searched', { fileId: f.id, model: f.model, provider: provider.embeddingModel });
        return false;
      }
      return true;
    });
    if (!usable.length) return [];

    const [embedded, packs] = await Promise.all([
      provider.embed([prompt]),
      Promise.all(usable.map((f) => cache.get(f.vectorsKey, async () => decodePacked(await deps.storage.get(f.vectorsKey))))),
    ]);
    const query = embedded.vectors[0]!;
    const candidates = topK(packs, query, k * OVERSAMPLE);
    if (!candidates.length) return [];

    const items = await deps.chunks.getByKeys(candidates.map((c) => ({ fileId: usable[c.pack]!.id, n: c.chunk })));
    const fileById = new Map(usable.map((f) => [f.id, f]));
    const scored = items
      .filter((item) => fileById.get(item.fileId)?.runId === item.runId)
      .map((item) => ({ item, score: cosine(query, binaryToVector(item.embedding)) }))
      .sort((a, b) => b.score - a.score || a.item.n - b.item.n)
      .slice(0, k);

    return scored.map(({ item, score }) => {
      const { quote, offset } = pickQuote(item.text, prompt);
      const page = pageAt(item.pageStarts ?? [], offset, item.page);
      return {
        fileId: item.fileId,
        fileName: fileById.get(item.fileId)!.fileName,
        page,
        ...(item.ocrPages?.includes(page) && { ocr: true }),
        chunk: item.n,
        score: Math.round(score * 10_000) / 10_000,
        text: item.text,
        quote,
      };
    });
  };
}

let defaultRetriever: ReturnType<typeof createRetriever> | undefined;

/**
 * The best passages of the chat's attached (completed) files for a prompt, best first; an empty
 * array when the chat has no completed file.
 */
export async function retrieveSources(input: RetrieveInput): Promise<Source[]> {
  if (!defaultRetriever) {
    const c = config();
    defaultRetriever = createRetriever({
      attachments: new AttachmentRepository(dynamo(), tableName()),
      files: new FileRepository(dynamo(), tableName()),
      chunks: new ChunkRepository(dynamo(), tableName()),
      storage: new FileStorage(s3Client(), bucketName()),
      cacheBytes: c.RETRIEVAL_CACHE_MB * 1024 * 1024,
    });
  }
  return defaultRetriever(input);
}
