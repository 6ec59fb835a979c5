import '../config/retrieval.ts';
import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConfigError, type Config } from '../config.ts';
import type { AiProvider, Source } from '../ai/types.ts';
import { AttachmentRepository } from '../files/attachment-repository.ts';
import { ChunkRepository, type ChunkItem } from '../files/chunk-repository.ts';
import { boxesOf, SPAN_FIELDS } from './quote-boxes.ts';
import { FileRepository } from '../files/file-repository.ts';
import type { CompletedFile } from '../files/file-record.ts';
import { FileStorage, isLexicalObject } from '../files/storage.ts';
import { logger } from '../observability/logger.ts';
import { vectorStoreFor, type VectorStore } from './vector-store.ts';
import { bm25TopK, termRarity } from './lexical-index.ts';
import { ingestAgain, loadPack, readVectors } from './stored-packs.ts';
import { rerankerFor, rerankStage, type Reranker } from './rerank/reranker.ts';
import { binaryToVector, cosine, lexicalPack, packedByteLength, topK, type PackedVectors } from './packed-vectors.ts';
import { pageAt, pickQuote, sectionAt } from './quote.ts';
import { quoteLocation } from './quote-location.ts';
import { queryTerms } from './terms.ts';

// Retrieval for a file chat, hybrid: the query's embedding against the packed vectors of the
// chat's completed files (one S3 object per file, kept in memory by a warm function, or the
// user's S3 Vectors index for files ingested with VECTOR_STORE=s3vectors, vector-store.ts) and its
// terms against the same objects' BM25 indexes; the two rankings fused by reciprocal rank
// fusion; the best candidates read from DynamoDB, their dense rank re-taken with the exact
// float32 embeddings, and fused again. Files stored before the lexical index are ranked dense only.

export interface RetrieveInput {
  /** The chat whose attached files are searched (unless fileIds is given). */
  chatId?: string;
  /** The files searched instead of a chat's attachments (a collection's, a search's); owned by the caller. */
  fileIds?: string[] | undefined;
  prompt: string;
  provider: AiProvider;
  /** How many passages to return (default 8). */
  k?: number;
  /** Told the tokens of the query's embedding before retrieve returns (they are charged). */
  onEmbedded?: (tokens: number) => void;
}

/** hybrid: dense and BM25 fused (default); dense or lexical: one ranking (for measuring). */
type RetrievalMode = 'hybrid' | 'dense' | 'lexical';

interface RetrievalDeps {
  attachments: AttachmentRepository;
  files: FileRepository;
  chunks: ChunkRepository;
  storage: FileStorage;
  /** Where files ingested with VECTOR_STORE=s3vectors have their vectors. */
  vectors: VectorStore;
  /** Bytes of packed vectors kept in memory. */
  cacheBytes: number;
  mode?: RetrievalMode;
  /** The rerank stage (rerank/reranker.ts): its reranker (none: the fused order), candidates and deadline. */
  rerank?: { reranker: Reranker | undefined; candidates: number; timeoutMs: number };
}

const DEFAULT_K = 8;
/** Candidates re-scored exactly per passage returned (int8 ranking is close, not exact). */
const OVERSAMPLE = 3;
/** Reciprocal rank fusion's constant (Cormack et al. 2009): a rank r adds 1 / (RRF_K + r). */
const RRF_K = 60;
/** Files in S3 Vectors whose lexical indexes are all loaded for BM25; above, only the dense ranking's files'. */
const LEXICAL_ALL_FILES = 16;
/** Stands in the dense ranking for a file whose vectors are not in memory (0 dimensions: never ranked). */
const NO_VECTORS = lexicalPack([]);

/** Weights of the dense and lexical rankings in the fusion. */
const WEIGHTS: Record<RetrievalMode, { dense: number; lexical: number }> = {
  hybrid: { dense: 1, lexical: 1 },
  dense: { dense: 1, lexical: 0 },
  lexical: { dense: 0.001, lexical: 1 }, // dense only breaks ties (and ranks files without an index)
};

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
      pending.then(
        (packed) => this.put(key, packed),
        () => undefined,
      );
    }
    return pending;
  }

  private put(key: string, packed: PackedVectors) {
    const size = packedByteLength(packed);
    if (size > this.maxBytes || this.entries.has(key)) return;
    this.entries.set(key, packed);
    this.bytes += size;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= packedByteLength(v);
    }
  }
}

/**
 * Where a quote (at `offset` in the chunk's text) is on its page: verified when it lies within one
 * of the chunk's verbatim stretches of a page's text (then it occurs on that page, at these
 * offsets); undefined for a quote across stretches, and for chunks stored before positions were
 * kept (docs/DECISIONS.md "Citation positions").
 */
function quotePlace(item: ChunkItem, offset: number, length: number) {
  const run = item.runs?.find(([at, runLength]) => at <= offset && offset + length <= at + runLength);
  if (!run || !length) return undefined;
  const [at, , page, pageStart] = run;
  const charStart = pageStart + (offset - at);
  const charEnd = charStart + length;
  return { page, position: { charStart, charEnd }, boxes: boxesOf(pageSpans(item.spans, page), charStart, charEnd) };
}

/** The spans of one page among a chunk's `[page, ...span]` records. */
function pageSpans(spans: number[] | undefined, page: number): number[] {
  const out: number[] = [];
  if (!spans) return out;
  const record = SPAN_FIELDS + 1;
  for (let i = 0; i + record <= spans.length; i += record)
    if (spans[i] === page) for (let k = 1; k < record; k++) out.push(spans[i + k]!);
  return out;
}

export function createRetriever(deps: RetrievalDeps) {
  const cache = new VectorCache(deps.cacheBytes);

  const weights = WEIGHTS[deps.mode ?? 'hybrid'];

  /**
   * Steps: embed the query while reading the chat's attachments (or taking the files given) →
   * their records, completed and embedded with this provider's model → the files' packed vectors
   * → rank all chunks twice (int8 dense, BM25) → fuse → read the best candidates → exact dense
   * re-rank among them, keep the current run's → fuse again → the best k, each with a verbatim
   * quote and the page the quote is on.
   */
  return async function retrieve({
    chatId,
    fileIds,
    prompt,
    provider,
    k = DEFAULT_K,
    onEmbedded,
  }: RetrieveInput): Promise<Source[]> {
    if (k <= 0) return [];
    // The query's embedding needs nothing from the table: ask the model while the files are looked up.
    const embedding = provider.embed([prompt]).then((result) => {
      onEmbedded?.(result.tokens);
      return result;
    });
    // With nothing to search the embedding is not used, but it was asked for: its tokens are told all the same.
    const nothingToSearch = async () => {
      await embedding.catch(() => undefined);
      return [];
    };
    const searched =
      fileIds ?? (chatId === undefined ? [] : (await deps.attachments.listByChat(chatId)).map((a) => a.fileId));
    if (!searched.length) return nothingToSearch();
    const records = await deps.files.getMany(searched);
    const usable = records.filter((f): f is CompletedFile => {
      if (f.status !== 'completed' || !f.vectorsKey) return false;
      if (f.model !== provider.embeddingModel) {
        logger.warn('file embedded with another model; not searched', {
          fileId: f.id,
          model: f.model,
          provider: provider.embeddingModel,
        });
        return false;
      }
      return true;
    });
    if (!usable.length) return nothingToSearch();

    // Each file is searched where its vectors are (a file ingested with packs keeps answering
    // after a switch to S3 Vectors): packs loaded and ranked here, the others queried in the index.
    const loadFile = (f: CompletedFile) =>
      cache.get(f.vectorsKey, async () => loadPack(await readVectors(deps.storage, f), f));
    const inIndex = usable.filter((f) => isLexicalObject(f.vectorsKey));
    const [embedded, loaded] = await Promise.all([
      embedding,
      Promise.all(usable.map((f) => (isLexicalObject(f.vectorsKey) ? undefined : loadFile(f)))),
    ]);
    const packs: (PackedVectors | undefined)[] = loaded;
    const query = embedded.vectors[0]!;
    // Same model, another size (its dimensions setting changed since): the file cannot be ranked.
    const otherSize = usable.find((f) => f.dimensions !== query.length && Number.isInteger(f.dimensions));
    if (otherSize)
      throw ingestAgain(otherSize, `of another embedding size (${otherSize.dimensions}, not ${query.length})`);
    const rerank = deps.rerank?.reranker ? deps.rerank : undefined;
    const wanted = Math.max(k * OVERSAMPLE, rerank?.candidates ?? 0);
    const packOf = new Map(usable.map((f, i) => [f.id, i]));
    let dense =
      weights.dense > 0
        ? topK(
            packs.map((p) => p ?? NO_VECTORS),
            query,
            wanted,
          )
        : [];
    if (weights.dense > 0 && inIndex.length) {
      const hits = await deps.vectors.query({
        userId: inIndex[0]!.userId,
        model: provider.embeddingModel,
        vector: query,
        topK: wanted,
        files: inIndex.map((f) => ({ fileId: f.id, runId: f.runId })),
      });
      dense = [...dense, ...hits.map((h) => ({ pack: packOf.get(h.fileId)!, chunk: h.chunk, page: 0, score: h.score }))]
        .sort((a, b) => b.score - a.score)
        .slice(0, wanted);
    }
    // BM25 over the lexical indexes of the files in the index too: all of them when they are few
    // (a file chat), else those of the files the dense ranking found (docs/DECISIONS.md "BM25 with S3 Vectors").
    if (weights.lexical > 0 && inIndex.length) {
      const denseFiles = new Set(dense.map((c) => c.pack));
      const lexicalFiles =
        inIndex.length <= LEXICAL_ALL_FILES ? inIndex : inIndex.filter((f) => denseFiles.has(packOf.get(f.id)!));
      await Promise.all(
        lexicalFiles.map(async (f) => {
          packs[packOf.get(f.id)!] = await loadFile(f);
        }),
      );
    }
    const lexical =
      weights.lexical > 0
        ? bm25TopK(
            packs.map((p) => p?.lexical),
            queryTerms(prompt),
            wanted,
          )
        : [];
    const lexicalRank = new Map(lexical.map((h, r) => [`${h.pack}:${packs[h.pack]!.chunk[h.row]}`, r]));
    const fused = new Map<string, { pack: number; chunk: number; score: number }>();
    const add = (pack: number, chunk: number, score: number) => {
      const key = `${pack}:${chunk}`;
      const hit = fused.get(key);
      if (hit) hit.score += score;
      else fused.set(key, { pack, chunk, score });
    };
    for (const [r, c] of dense.entries()) add(c.pack, c.chunk, weights.dense / (RRF_K + r + 1));
    for (const [r, h] of lexical.entries())
      add(h.pack, packs[h.pack]!.chunk[h.row]!, weights.lexical / (RRF_K + r + 1));
    const candidates = [...fused.values()].sort((a, b) => b.score - a.score).slice(0, wanted);
    if (!candidates.length) return [];

    const items = await deps.chunks.getByKeys(candidates.map((c) => ({ fileId: usable[c.pack]!.id, n: c.chunk })));
    const fileById = new Map(usable.map((f) => [f.id, f]));
    // The exact dense ranking among the candidates, fused with the lexical one.
    let scored = items
      .filter((item) => fileById.get(item.fileId)?.runId === item.runId)
      .map((item) => ({ item, cosine: cosine(query, binaryToVector(item.embedding)) }))
      .sort((a, b) => b.cosine - a.cosine || a.item.n - b.item.n)
      .map((c, r) => {
        const lr = lexicalRank.get(`${packOf.get(c.item.fileId)}:${c.item.n}`);
        return {
          ...c,
          fused: weights.dense / (RRF_K + r + 1) + (lr === undefined ? 0 : weights.lexical / (RRF_K + lr + 1)),
        };
      })
      .sort((a, b) => b.fused - a.fused || b.cosine - a.cosine)
      .slice(0, rerank ? Math.max(k, rerank.candidates) : k);
    // The rerank stage orders the best candidates; on any failure the fused order stands.
    const { order } = await rerankStage(
      rerank?.reranker,
      {
        query: prompt,
        passages: scored.map(({ item }) => ({ text: item.text, section: item.section })),
        topN: k,
        termWeights: () =>
          termRarity(
            packs.map((p) => p?.lexical),
            queryTerms(prompt),
          ),
      },
      rerank?.timeoutMs ?? 0,
    );

    scored = order.map((i) => scored[i]!);

    return scored.map(({ item, cosine: score }) => {
      const { quote, offset } = pickQuote(
        item.text,
        prompt,
        undefined,
        item.runs?.map(([at]) => at),
      );
      const place = quotePlace(item, offset, quote.length);
      const page = place?.page ?? pageAt(item.pageStarts ?? [], offset, item.page);
      const section = sectionAt(item.sectionStarts, offset) ?? item.section;
      return {
        fileId: item.fileId,
        fileName: fileById.get(item.fileId)!.fileName,
        page,
        part: page,
        // A quote may open with the headings above its sentence: its place is where it ends.
        location: quoteLocation(
          item.places,
          page,
          place?.position,
          sectionAt(item.sectionStarts, offset + Math.max(0, quote.length - 1)) ?? item.section,
        ),
        ...(item.ocrPages?.includes(page) && { ocr: true }),
        chunk: item.n,
        score: Math.round(score * 10_000) / 10_000,
        text: item.text,
        quote,
        section,
        ...place?.position,
        boxes: place?.boxes ?? [],
        verified: !!place,
      };
    });
  };
}

export type Retriever = ReturnType<typeof createRetriever>;

/**
 * The retriever of a configuration's table and bucket (send-message composes one on its first
 * file-chat prompt): the best passages of the chat's attached (completed) files for a prompt,
 * best first; an empty array when the chat has no completed file.
 */
export function retrieverFor(config: Config, db: DynamoDBDocumentClient, s3: S3Client): Retriever {
  if (!config.BUCKET_NAME) throw new ConfigError('BUCKET_NAME must be set for retrieval');
  const storage = new FileStorage(s3, config.BUCKET_NAME);
  return createRetriever({
    attachments: new AttachmentRepository(db, config.TABLE_NAME),
    files: new FileRepository(db, config.TABLE_NAME),
    chunks: new ChunkRepository(db, config.TABLE_NAME),
    storage,
    vectors: vectorStoreFor(config, storage),
    cacheBytes: config.RETRIEVAL_CACHE_MB * 1024 * 1024,
    mode: config.RETRIEVAL_MODE,
    rerank: {
      reranker: rerankerFor(config),
      candidates: config.RERANK_CANDIDATES,
      timeoutMs: config.RERANK_TIMEOUT_MS,
    },
  });
}
