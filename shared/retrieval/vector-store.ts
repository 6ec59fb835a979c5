import '../config/retrieval.ts';
import { createHash } from 'node:crypto';
import type { Config } from '../config.ts';
import { bucketName } from '../clients.ts';
import { s3Client } from '../s3-client.ts';
import {
  isLexicalObject,
  lexicalKey,
  partVectorsKey,
  vectorsKey,
  vectorsPrefix,
  workPrefix,
  FileStorage,
} from '../files/storage.ts';
import { logger } from '../observability/logger.ts';
import {
  concatPacked,
  decodePacked,
  encodePacked,
  lexicalPack,
  packVectors,
  type PackedVectors,
} from './packed-vectors.ts';
import type { S3VectorsApi } from './s3-vectors-api.ts';
import type { LexicalIndex } from './lexical-index.ts';

// Where a file's embeddings are kept and searched: one interface, two backends
// (docs/DECISIONS.md "Vector store: two backends").
// - packs (default): each part's int8 vectors and lexical index in one S3 object, concatenated
//   into the file's object at completion; retrieval loads the chat's files' objects.
// - s3vectors: the float32 vectors in Amazon S3 Vectors, one index per user and embedding model
//   (and size), keyed `<fileId>#<runId>#<chunk>` with the file and run as filterable metadata;
//   the S3 objects hold the same rows' lexical index alone (a pack of 0 dimensions, `.plex`), which
//   also lists the keys written, so that every vector can be found again to be deleted.
// A file records which backend holds its vectors in its vectorsKey (`.pvec` or `.plex`): files
// ingested with packs keep answering after a switch to s3vectors (retrieval searches each file
// where its vectors are).

export interface VectorRow {
  chunk: number;
  page: number;
  vector: Float32Array;
  text: string;
}

/** One run of one file. */
export interface RunRef {
  userId: string;
  fileId: string;
  runId: string;
  /** The embedding model (with `dimensions`, it names the S3 Vectors index). */
  model: string;
}

/** A file whose vectors are searched: its current run. */
export interface SearchedFile {
  fileId: string;
  runId: string;
}

export interface DenseHit {
  fileId: string;
  chunk: number;
  /** Cosine similarity. */
  score: number;
}

export interface VectorQuery {
  userId: string;
  model: string;
  vector: Float32Array;
  topK: number;
  /**
   * The files searched (a chat's, a collection's resolved to its files, or a search's fileIds):
   * hits of any other file or run are never returned.
   */
  files: SearchedFile[];
}

export interface VectorStore {
  readonly backend: Config['VECTOR_STORE'];
  /**
   * The embed stage: one part's rows (written again as they are on a redelivery); `lexical`, the
   * rows' lexical index when the caller built it already (else built here).
   */
  writePart(ref: RunRef, part: number, rows: VectorRow[], dimensions: number, lexical?: LexicalIndex): Promise<void>;
  /** Removes what writePart wrote of a part whose run ended meanwhile. */
  removePart(ref: RunRef, part: number, chunks: number[], dimensions: number): Promise<void>;
  /** Completion: the run's parts → the file's object; the key the record keeps (vectorsKey). */
  gatherRun(ref: Omit<RunRef, 'model'>, parts: number): Promise<{ key: string; count: number; dimensions: number }>;
  /** Removes the vectors of a run named by its file object (a run superseded by a newer completion). */
  removeRun(userId: string, fileId: string, key: string): Promise<void>;
  /** Removes every vector of a file, whatever its runs (delete, erasure, retention): before its objects go. */
  removeFile(userId: string, fileId: string): Promise<void>;
  /** The nearest rows of the given files' current runs (the files this backend holds). */
  query(q: VectorQuery): Promise<DenseHit[]>;
}

export class PackStore implements VectorStore {
  readonly backend: VectorStore['backend'] = 'packs';

  constructor(protected readonly storage: FileStorage) {}

  async writePart(
    ref: RunRef,
    part: number,
    rows: VectorRow[],
    dimensions: number,
    lexical?: LexicalIndex,
  ): Promise<void> {
    await this.putPack(ref, part, packVectors(rows, dimensions, lexical));
  }

  /** A part's pack, where its run's parts are gathered from. */
  protected async putPack(ref: RunRef, part: number, packed: PackedVectors): Promise<void> {
    await this.storage.put(
      partVectorsKey(ref.fileId, ref.runId, part),
      encodePacked(packed),
      'application/octet-stream',
    );
  }

  async removePart(ref: RunRef, part: number, _chunks?: number[], _dimensions?: number): Promise<void> {
    await this.storage.deleteKeys([partVectorsKey(ref.fileId, ref.runId, part)]);
  }

  async gatherRun(ref: Omit<RunRef, 'model'>, parts: number) {
    const packed = concatPacked(
      await Promise.all(
        Array.from({ length: parts }, async (_, p) =>
          decodePacked(await this.storage.get(partVectorsKey(ref.fileId, ref.runId, p))),
        ),
      ),
    );
    const key =
      packed.dimensions === 0 && packed.count > 0
        ? lexicalKey(ref.fileId, ref.runId)
        : vectorsKey(ref.fileId, ref.runId);
    await this.storage.put(key, encodePacked(packed), 'application/octet-stream');
    return { key, count: packed.count, dimensions: packed.dimensions };
  }

  async removeRun(_userId: string, _fileId: string, key: string): Promise<void> {
    await this.storage.deleteKeys([key]);
  }

  async removeFile(_userId: string, _fileId: string): Promise<void> {
    // A file's packs are objects under its prefixes: the caller deletes those.
  }

  /** Not searched through the store: retrieval ranks loaded packs itself (retrieve.ts, topK). */
  async query(_q: VectorQuery): Promise<DenseHit[]> {
    return [];
  }
}

/** S3 Vectors names: lowercase letters, digits and hyphens; the user and model hashed to fit 63 characters. */
const hashed = (s: string, length: number) => createHash('sha256').update(s).digest('hex').slice(0, length);
export const userIndexPrefix = (userId: string) => `u-${hashed(userId, 24)}-`;
export const indexName = (userId: string, model: string, dimensions: number) =>
  `${userIndexPrefix(userId)}${hashed(model, 12)}-${dimensions}`;
export const vectorKey = (fileId: string, runId: string, chunk: number) => `${fileId}#${runId}#${chunk}`;

/** The documented limits of S3 Vectors this backend works within. */
const PUT_BATCH = 500;
const DELETE_BATCH = 500;
const MAX_TOP_K = 100;
/** Files named in one filter's $in; more are filtered after the query (its top-k from the whole index). */
const MAX_FILTER_FILES = 500;

export class S3VectorsStore extends PackStore {
  override readonly backend: VectorStore['backend'] = 's3vectors';
  private readonly knownIndexes = new Set<string>();

  constructor(
    storage: FileStorage,
    private readonly api: S3VectorsApi,
    private readonly bucket: string,
  ) {
    super(storage);
  }

  /** The part's lexical index first (it lists the keys, for deletion), then its vectors. */
  override async writePart(
    ref: RunRef,
    part: number,
    rows: VectorRow[],
    dimensions: number,
    lexical?: LexicalIndex,
  ): Promise<void> {
    await this.putPack(ref, part, lexicalPack(rows, lexical));
    const index = indexName(ref.userId, ref.model, dimensions);
    await this.ensureIndex(index, dimensions);
    for (let i = 0; i < rows.length; i += PUT_BATCH) {
      const batch = rows.slice(i, i + PUT_BATCH).map((r) => ({
        key: vectorKey(ref.fileId, ref.runId, r.chunk),
        data: { float32: Array.from(r.vector) },
        metadata: { fileId: ref.fileId, runId: ref.runId, chunk: r.chunk },
      }));
      await this.api.putVectors({ vectorBucketName: this.bucket, indexName: index, vectors: batch });
    }
  }

  override async removePart(ref: RunRef, part: number, chunks: number[], dimensions: number): Promise<void> {
    await this.deleteKeys(
      [indexName(ref.userId, ref.model, dimensions)],
      chunks.map((c) => vectorKey(ref.fileId, ref.runId, c)),
    );
    await super.removePart(ref, part);
  }

  override async removeRun(userId: string, fileId: string, key: string): Promise<void> {
    if (isLexicalObject(key)) await this.removeListed(userId, fileId, [key]);
    await super.removeRun(userId, fileId, key);
  }

  /** The keys listed by the file's lexical objects (completed runs and parts in flight), in each of the user's indexes. */
  override async removeFile(userId: string, fileId: string): Promise<void> {
    const objects = [
      ...(await this.storage.listKeys(vectorsPrefix(fileId))).filter(isLexicalObject),
      ...(await this.storage.listKeys(workPrefix(fileId))).filter((k) => k.endsWith('.vec')),
    ];
    await this.removeListed(userId, fileId, objects);
  }

  private async removeListed(userId: string, fileId: string, objects: string[]): Promise<void> {
    const keys = new Set<string>();
    for (const object of objects) {
      // vectors/<fileId>/<runId>.plex or work/<fileId>/<runId>/part-<n>.vec
      const runId = object.split('/')[2]!.replace(/\.plex$/, '');
      let packed: PackedVectors;
      try {
        packed = decodePacked(await this.storage.get(object));
      } catch (err) {
        logger.warn('lexical object unreadable: its vectors are left', { fileId, object, error: String(err) });
        continue;
      }
      if (packed.dimensions !== 0) continue; // written by the packs backend: nothing in S3 Vectors
      for (const chunk of packed.chunk) keys.add(vectorKey(fileId, runId, chunk));
    }
    if (!keys.size) return;
    const indexes = await this.api.listIndexes({ vectorBucketName: this.bucket, prefix: userIndexPrefix(userId) });
    await this.deleteKeys(indexes, [...keys]);
  }

  private async deleteKeys(indexes: string[], keys: string[]): Promise<void> {
    for (const index of indexes) {
      for (let i = 0; i < keys.length; i += DELETE_BATCH) {
        try {
          await this.api.deleteVectors({
            vectorBucketName: this.bucket,
            indexName: index,
            keys: keys.slice(i, i + DELETE_BATCH),
          });
        } catch (err) {
          if ((err as { name?: string }).name === 'NotFoundException') break; // no such index: nothing to delete
          throw err;
        }
      }
    }
  }

  /** Indexes are made on a user's first write with a model, cosine, the fileId and runId filterable. */
  private async ensureIndex(index: string, dimensions: number): Promise<void> {
    if (this.knownIndexes.has(index)) return;
    try {
      await this.api.createIndex({
        vectorBucketName: this.bucket,
        indexName: index,
        dataType: 'float32',
        dimension: dimensions,
        distanceMetric: 'cosine',
      });
    } catch (err) {
      if ((err as { name?: string }).name !== 'ConflictException') throw err; // made already
    }
    this.knownIndexes.add(index);
  }

  override async query(q: VectorQuery): Promise<DenseHit[]> {
    if (!q.files.length || q.topK <= 0) return [];
    const runs = new Map(q.files.map((f) => [f.fileId, f.runId]));
    // The file filter; the run is checked on each hit (a run superseded or ended leaves its keys
    // until they are deleted, and they must not take the top-k's places: the filter names the run).
    const filter =
      q.files.length <= MAX_FILTER_FILES ? { runId: { $in: [...new Set(q.files.map((f) => f.runId))] } } : undefined;
    let out: Awaited<ReturnType<S3VectorsApi['queryVectors']>>;
    try {
      out = await this.api.queryVectors({
        vectorBucketName: this.bucket,
        indexName: indexName(q.userId, q.model, q.vector.length),
        queryVector: { float32: Array.from(q.vector) },
        topK: Math.min(q.topK, MAX_TOP_K),
        filter,
        returnDistance: true,
        returnMetadata: true,
      });
    } catch (err) {
      if ((err as { name?: string }).name === 'NotFoundException') return []; // nothing written with this model yet
      throw err;
    }
    return out.flatMap((v) => {
      const fileId = String(v.metadata?.fileId ?? '');
      if (runs.get(fileId) !== v.metadata?.runId || typeof v.metadata?.chunk !== 'number') return [];
      return [{ fileId, chunk: v.metadata.chunk, score: 1 - (v.distance ?? 1) }];
    });
  }
}

/** The vector store of this cold start's configuration, over the files bucket. */
export function configuredVectorStore(config: Config): VectorStore {
  return vectorStoreFor(config, new FileStorage(s3Client(), bucketName()));
}

/** The vector store of a configuration (its S3 Vectors client made only when that backend is chosen). */
export function vectorStoreFor(config: Config, storage: FileStorage): VectorStore {
  if (config.VECTOR_STORE !== 's3vectors') return new PackStore(storage);
  return new S3VectorsStore(storage, s3VectorsOnFirstUse(config), config.S3_VECTORS_BUCKET!);
}

/**
 * The S3 Vectors operations, their SDK client imported on the first call: the functions that
 * compose a store (uploads, deletes, the pipeline) keep it out of their cold start, and with
 * packs never load it.
 */
function s3VectorsOnFirstUse(config: Config): S3VectorsApi {
  let api: Promise<S3VectorsApi> | undefined;
  const load = () => {
    api ??= import('./s3-vectors-api.ts').then((m) => m.s3VectorsApi(config));
    return api;
  };
  return {
    createIndex: async (input) => (await load()).createIndex(input),
    putVectors: async (input) => (await load()).putVectors(input),
    deleteVectors: async (input) => (await load()).deleteVectors(input),
    listIndexes: async (input) => (await load()).listIndexes(input),
    queryVectors: async (input) => (await load()).queryVectors(input),
  };
}
