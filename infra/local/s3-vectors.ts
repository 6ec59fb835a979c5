import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  appendFileSync,
  closeSync,
  createReadStream,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';

// A loopback stand-in of Amazon S3 Vectors, for npm start (VECTOR_STORE=s3vectors) and the tests:
// the service's S3 Vectors client talks to it as to the real endpoint. Its wire protocol is the
// service's REST-JSON: POST /<Operation> with a JSON body, errors as an `x-amzn-errortype` header
// and `{ message }` with the documented statuses (ValidationException 400, AccessDeniedException
// 403, NotFoundException 404, ConflictException 409). Its limits are the documented ones:
// dimension 1–4,096, topK 1–100, 500 vectors per PutVectors and DeleteVectors, 100 per GetVectors,
// 1,000 per ListVectors page, keys of 1–1,024 characters, metadata up to 40 KB per vector of which
// 2 KB filterable, 50 keys, 10 non-filterable keys per index, 20 MiB per request. Distances are
// exact (the service's are approximate): cosine (1 − cos) or euclidean. Filters are evaluated as
// documented: implicit equality, $eq/$ne/$gt/$gte/$lt/$lte/$in/$nin/$exists, $and/$or, and an
// array metadata value matching $eq/$in when any element does.
//
// With a dataDir (npm start), each index is kept in dataDir/s3-vectors/<bucket>/: <index>.json
// its settings, <index>.log a line per vector written or deleted, appended by each request and
// compacted when the stand-in starts (read line by line: no file holds a whole index as one
// string, which a million vectors would not fit in).

export const LIMITS = {
  maxDimension: 4096,
  maxTopK: 100,
  maxPut: 500,
  maxDelete: 500,
  maxGet: 100,
  maxListPage: 1000,
  maxKeyLength: 1024,
  maxMetadataBytes: 40 * 1024,
  maxFilterableMetadataBytes: 2 * 1024,
  maxMetadataKeys: 50,
  maxNonFilterableKeys: 10,
  maxSegments: 16,
  maxRequestBytes: 20 * 1024 * 1024,
} as const;

type Metadata = Record<string, unknown>;

interface StoredVector {
  data: Float32Array;
  metadata?: Metadata;
}

/** Vectors per block of an index's storage. */
const BLOCK_VECTORS = 256;

/**
 * An index's vectors in compact storage: the float32 values in blocks of BLOCK_VECTORS vectors
 * (a library of a million 1,536-dimension vectors is 6 GB of values; one object and one buffer
 * per vector would add hundreds of MB and scatter them), each vector's norm beside it (a cosine
 * query does not compute it again), the keys and metadata apart by slot. A deleted vector's slot
 * is reused. Iteration follows the keys' insertion order, as a Map's does.
 */
class VectorSlots {
  private readonly blocks: Float32Array[] = [];
  private norms = new Float64Array(BLOCK_VECTORS);
  private readonly metadataOf: (Metadata | undefined)[] = [];
  private readonly slotOf = new Map<string, number>();
  private readonly freeSlots: number[] = [];

  constructor(readonly dimension: number) {}

  get size(): number {
    return this.slotOf.size;
  }

  keys(): IterableIterator<string> {
    return this.slotOf.keys();
  }

  has(key: string): boolean {
    return this.slotOf.has(key);
  }

  set(key: string, data: Float32Array, metadata: Metadata | undefined): void {
    let slot = this.slotOf.get(key);
    if (slot === undefined) {
      slot = this.freeSlots.pop() ?? this.metadataOf.length;
      this.slotOf.set(key, slot);
    }
    const block = Math.floor(slot / BLOCK_VECTORS);
    while (this.blocks.length <= block) this.blocks.push(new Float32Array(BLOCK_VECTORS * this.dimension));
    if (this.norms.length <= slot) {
      const grown = new Float64Array(this.norms.length * 2);
      grown.set(this.norms);
      this.norms = grown;
    }
    this.blocks[block]!.set(data, (slot % BLOCK_VECTORS) * this.dimension);
    let squares = 0;
    for (let i = 0; i < data.length; i++) squares += data[i]! * data[i]!;
    this.norms[slot] = Math.sqrt(squares);
    this.metadataOf[slot] = metadata;
  }

  delete(key: string): void {
    const slot = this.slotOf.get(key);
    if (slot === undefined) return;
    this.slotOf.delete(key);
    this.metadataOf[slot] = undefined;
    this.freeSlots.push(slot);
  }

  get(key: string): StoredVector | undefined {
    const slot = this.slotOf.get(key);
    return slot === undefined ? undefined : this.at(slot);
  }

  /**
   * Visits every vector in insertion order: its key, the block holding its values and their
   * offset there, its norm and metadata (no object made per vector: a query scans them all).
   */
  scan(
    visit: (key: string, block: Float32Array, offset: number, norm: number, metadata: Metadata | undefined) => void,
  ) {
    for (const [key, slot] of this.slotOf)
      visit(
        key,
        this.blocks[Math.floor(slot / BLOCK_VECTORS)]!,
        (slot % BLOCK_VECTORS) * this.dimension,
        this.norms[slot]!,
        this.metadataOf[slot],
      );
  }

  private at(slot: number): StoredVector {
    const offset = (slot % BLOCK_VECTORS) * this.dimension;
    return {
      data: this.blocks[Math.floor(slot / BLOCK_VECTORS)]!.subarray(offset, offset + this.dimension),
      metadata: this.metadataOf[slot],
    };
  }
}

interface VectorIndex {
  name: string;
  dimension: number;
  distanceMetric: 'cosine' | 'euclidean';
  nonFilterable: string[];
  creationTime: number;
  vectors: VectorSlots;
}

interface VectorBucket {
  name: string;
  creationTime: number;
  indexes: Map<string, VectorIndex>;
}

class ApiError extends Error {
  constructor(
    readonly type: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
const invalid = (message: string) => new ApiError('ValidationException', 400, message);
const notFound = (message: string) => new ApiError('NotFoundException', 404, message);
const conflict = (message: string) => new ApiError('ConflictException', 409, message);

/** Vector bucket and index names: 3–63 lowercase letters, digits, hyphens (indexes: dots too), a letter or digit at each end. */
const BUCKET_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;
const INDEX_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export interface S3VectorsStandIn {
  url: string;
  /** Vectors stored in an index (tests look inside); undefined when there is no such index. */
  vectorKeys(bucket: string, index: string): string[] | undefined;
  /** Index names of a bucket. */
  indexNames(bucket: string): string[];
  /** Requests answered so far, by operation. */
  calls: Map<string, number>;
  /** Stops the server and drops the vectors held (what was kept in dataDir stays). */
  close(): Promise<void>;
}

export interface S3VectorsOptions {
  /** Where indexes are kept across restarts (npm start); none: in memory (tests). */
  dataDir?: string;
  port?: number;
}

const arn = (bucket: string, index?: string) =>
  `arn:aws:s3vectors:us-east-1:000000000000:bucket/${bucket}${index ? `/index/${index}` : ''}`;

function metadataBytes(metadata: Metadata, keys: string[]): number {
  let bytes = 0;
  for (const k of keys) bytes += Buffer.byteLength(k) + Buffer.byteLength(JSON.stringify(metadata[k]));
  return bytes;
}

function checkMetadataValue(key: string, value: unknown) {
  const scalar = (v: unknown) =>
    typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
  if (scalar(value)) return;
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) return;
  throw invalid(`Invalid metadata value for key '${key}': a string, number, boolean or non-empty list of strings`);
}

type Primitive = string | number | boolean;
const isPrimitive = (v: unknown): v is Primitive =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/** Checks a filter's syntax and that it names only filterable keys; throws ValidationException. */
function checkFilter(filter: unknown, nonFilterable: string[]): void {
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter))
    throw invalid('Invalid filter: an object');
  const entries = Object.entries(filter);
  if (!entries.length) throw invalid('Invalid filter: empty object');
  for (const [key, cond] of entries) {
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(cond) || !cond.length)
        throw invalid(`Invalid filter: ${key} takes a non-empty array of filters`);
      for (const f of cond) checkFilter(f, nonFilterable);
      continue;
    }
    if (key.startsWith('$')) throw invalid(`Invalid filter: unknown operator ${key}`);
    if (nonFilterable.includes(key)) throw invalid(`Invalid filter: metadata key '${key}' is not filterable`);
    if (isPrimitive(cond)) continue;
    if (typeof cond !== 'object' || cond === null || Array.isArray(cond)) throw invalid(`Invalid filter on '${key}'`);
    const ops = Object.entries(cond);
    if (ops.length !== 1) throw invalid(`Invalid filter on '${key}': one operator per key`);
    const [op, operand] = ops[0]!;
    switch (op) {
      case '$eq':
      case '$ne':
        if (!isPrimitive(operand)) throw invalid(`Invalid filter: ${op} takes a string, number or boolean`);
        break;
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        if (typeof operand !== 'number' || !Number.isFinite(operand))
          throw invalid(`Invalid filter: ${op} takes a number`);
        break;
      case '$in':
      case '$nin':
        if (!Array.isArray(operand) || !operand.length || !operand.every(isPrimitive))
          throw invalid(`Invalid filter: ${op} takes a non-empty array of primitives`);
        break;
      case '$exists':
        if (typeof operand !== 'boolean') throw invalid('Invalid filter: $exists takes a boolean');
        break;
      default:
        throw invalid(`Invalid filter: unknown operator ${op}`);
    }
  }
}

/** Whether metadata matches a (checked) filter. */
export function matchesFilter(metadata: Metadata | undefined, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([key, cond]) => {
    if (key === '$and') return (cond as Record<string, unknown>[]).every((f) => matchesFilter(metadata, f));
    if (key === '$or') return (cond as Record<string, unknown>[]).some((f) => matchesFilter(metadata, f));
    const value = metadata?.[key];
    const values: unknown[] = Array.isArray(value) ? value : value === undefined ? [] : [value];
    if (isPrimitive(cond)) return values.includes(cond);
    const [op, operand] = Object.entries(cond as object)[0]!;
    switch (op) {
      case '$eq':
        return values.includes(operand);
      case '$ne':
        return value !== undefined && !values.includes(operand);
      case '$gt':
        return typeof value === 'number' && value > (operand as number);
      case '$gte':
        return typeof value === 'number' && value >= (operand as number);
      case '$lt':
        return typeof value === 'number' && value < (operand as number);
      case '$lte':
        return typeof value === 'number' && value <= (operand as number);
      case '$in':
        return values.some((v) => (operand as unknown[]).includes(v));
      case '$nin':
        return value !== undefined && !values.some((v) => (operand as unknown[]).includes(v));
      case '$exists':
        return (value !== undefined) === operand;
      default:
        return false;
    }
  });
}

/** The distance from a query to the vector at `offset` in `block`; `norms`, the query's and the vector's (cosine). */
function distance(
  metric: VectorIndex['distanceMetric'],
  query: Float32Array,
  block: Float32Array,
  offset: number,
  queryNorm: number,
  norm: number,
): number {
  if (metric === 'euclidean') {
    let sq = 0;
    for (let i = 0; i < query.length; i++) {
      const d = query[i]! - block[offset + i]!;
      sq += d * d;
    }
    return Math.sqrt(sq);
  }
  let dot = 0;
  for (let i = 0; i < query.length; i++) dot += query[i]! * block[offset + i]!;
  const norms = queryNorm * norm;
  return norms ? 1 - dot / norms : 1;
}

function float32Of(data: unknown, dimension: number, what: string): Float32Array {
  const values = (data as { float32?: unknown } | undefined)?.float32;
  if (!Array.isArray(values)) throw invalid(`${what}: data.float32 is required`);
  if (values.length !== dimension)
    throw invalid(`${what}: dimension ${values.length} does not match the index's dimension ${dimension}`);
  if (!values.every((v) => typeof v === 'number' && Number.isFinite(v)))
    throw invalid(`${what}: values must be finite numbers`);
  return Float32Array.from(values as number[]);
}

function int(body: Record<string, unknown>, name: string, min: number, max: number, fallback?: number): number {
  const v = body[name] ?? fallback;
  if (v === undefined) throw invalid(`${name} is required`);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw invalid(`${name} must be an integer between ${min} and ${max}`);
  return v;
}

// ---- persistence (npm start)

const settingsFile = (dir: string, bucket: string, index: string) => join(dir, bucket, `${index}.json`);
const logFile = (dir: string, bucket: string, index: string) => join(dir, bucket, `${index}.log`);

const base64Of = (data: Float32Array) => Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
function float32FromBase64(data: string): Float32Array {
  const bytes = Buffer.from(data, 'base64');
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}
const putRecord = (key: string, data: Float32Array, metadata: Metadata | undefined) =>
  `${JSON.stringify(['put', key, base64Of(data), metadata ?? null])}\n`;
const deleteRecord = (key: string) => `${JSON.stringify(['delete', key])}\n`;

function writeSettings(dir: string, bucket: string, index: VectorIndex) {
  const file = settingsFile(dir, bucket, index.name);
  const { name, dimension, distanceMetric, nonFilterable, creationTime } = index;
  writeFileSync(`${file}.tmp`, JSON.stringify({ name, dimension, distanceMetric, nonFilterable, creationTime }));
  renameSync(`${file}.tmp`, file);
}

/** Rewrites an index's log with one line per vector it holds, a batch of lines per write. */
function compactLog(dir: string, bucket: string, index: VectorIndex) {
  const file = logFile(dir, bucket, index.name);
  const fd = openSync(`${file}.tmp`, 'w');
  try {
    let lines: string[] = [];
    for (const key of index.vectors.keys()) {
      const v = index.vectors.get(key)!;
      lines.push(putRecord(key, v.data, v.metadata));
      if (lines.length === LIMITS.maxPut) {
        writeSync(fd, lines.join(''));
        lines = [];
      }
    }
    if (lines.length) writeSync(fd, lines.join(''));
  } finally {
    closeSync(fd);
  }
  renameSync(`${file}.tmp`, file);
}

/** The buckets and indexes kept in dir, each index's log replayed line by line. */
async function loadBuckets(dir: string): Promise<VectorBucket[]> {
  const buckets: VectorBucket[] = [];
  for (const name of readdirSync(dir)) {
    const bucket: VectorBucket = { name, creationTime: Date.now(), indexes: new Map() };
    for (const file of readdirSync(join(dir, name)).filter((f) => f.endsWith('.json'))) {
      const saved = JSON.parse(readFileSync(join(dir, name, file), 'utf8'));
      const index: VectorIndex = {
        name: saved.name,
        dimension: saved.dimension,
        distanceMetric: saved.distanceMetric,
        nonFilterable: saved.nonFilterable,
        creationTime: saved.creationTime,
        vectors: new VectorSlots(saved.dimension),
      };
      // The earlier format held the vectors in the settings file: read them, then rewrite.
      const earlier = Array.isArray(saved.vectors);
      let records = 0;
      let damaged = false;
      if (earlier)
        for (const [key, data, metadata] of saved.vectors as [string, string, Metadata | null][]) {
          index.vectors.set(key, float32FromBase64(data), metadata ?? undefined);
          records++;
        }
      const log = logFile(dir, name, index.name);
      if (existsSync(log))
        for await (const line of createInterface({
          input: createReadStream(log),
          crlfDelay: Number.POSITIVE_INFINITY,
        })) {
          if (!line) continue;
          let record: ['put', string, string, Metadata | null] | ['delete', string];
          try {
            record = JSON.parse(line);
          } catch {
            damaged = true; // a line cut short when the process stopped mid-write
            continue;
          }
          records++;
          if (record[0] === 'put') index.vectors.set(record[1], float32FromBase64(record[2]), record[3] ?? undefined);
          else index.vectors.delete(record[1]);
        }
      if (earlier) writeSettings(dir, name, index);
      if (earlier || damaged || records > index.vectors.size) compactLog(dir, name, index);
      bucket.indexes.set(index.name, index);
    }
    buckets.push(bucket);
  }
  return buckets;
}

export async function startS3Vectors(options: S3VectorsOptions = {}): Promise<S3VectorsStandIn> {
  const buckets = new Map<string, VectorBucket>();
  const calls = new Map<string, number>();
  const dir = options.dataDir ? join(options.dataDir, 's3-vectors') : undefined;

  const appendLog = (bucket: VectorBucket, index: VectorIndex, records: string[]) => {
    if (dir) appendFileSync(logFile(dir, bucket.name, index.name), records.join(''));
  };
  if (dir) {
    mkdirSync(dir, { recursive: true });
    for (const bucket of await loadBuckets(dir)) buckets.set(bucket.name, bucket);
  }

  const bucketOf = (body: Record<string, unknown>): VectorBucket => {
    const name =
      typeof body.vectorBucketName === 'string'
        ? body.vectorBucketName
        : typeof body.vectorBucketArn === 'string'
          ? body.vectorBucketArn.split('/').pop()
          : typeof body.indexArn === 'string'
            ? body.indexArn.split('/')[1]
            : undefined;
    if (!name) throw invalid('vectorBucketName or vectorBucketArn is required');
    const bucket = buckets.get(name);
    if (!bucket) throw notFound(`The specified vector bucket could not be found: ${name}`);
    return bucket;
  };
  const indexOf = (body: Record<string, unknown>): [VectorBucket, VectorIndex] => {
    const bucket = bucketOf(body);
    const name =
      typeof body.indexName === 'string'
        ? body.indexName
        : typeof body.indexArn === 'string'
          ? body.indexArn.split('/').pop()
          : undefined;
    if (!name) throw invalid('indexName or indexArn is required');
    const index = bucket.indexes.get(name);
    if (!index) throw notFound(`The specified index could not be found: ${name}`);
    return [bucket, index];
  };
  const keysOf = (body: Record<string, unknown>, max: number): string[] => {
    const keys = body.keys;
    if (!Array.isArray(keys) || keys.length < 1 || keys.length > max)
      throw invalid(`keys must hold between 1 and ${max} keys`);
    for (const k of keys)
      if (typeof k !== 'string' || k.length < 1 || k.length > LIMITS.maxKeyLength)
        throw invalid(`Each key must be 1 to ${LIMITS.maxKeyLength} characters`);
    return keys as string[];
  };
  const describe = (key: string, v: StoredVector, data: boolean, metadata: boolean) => ({
    key,
    // Absent fields are undefined here, left out of the JSON answer.
    data: data ? { float32: Array.from(v.data) } : undefined,
    metadata: metadata ? v.metadata : undefined,
  });

  const operations: Record<string, (body: Record<string, unknown>) => unknown> = {
    CreateVectorBucket(body) {
      const name = body.vectorBucketName;
      if (typeof name !== 'string' || !BUCKET_NAME.test(name)) throw invalid('Invalid vector bucket name');
      if (buckets.has(name)) throw conflict(`A vector bucket named ${name} already exists`);
      const bucket = { name, creationTime: Date.now(), indexes: new Map() };
      buckets.set(name, bucket);
      if (dir) mkdirSync(join(dir, name), { recursive: true });
      return { vectorBucketArn: arn(name) };
    },
    GetVectorBucket(body) {
      const bucket = bucketOf(body);
      return {
        vectorBucket: {
          vectorBucketName: bucket.name,
          vectorBucketArn: arn(bucket.name),
          creationTime: bucket.creationTime / 1000,
        },
      };
    },
    CreateIndex(body) {
      const bucket = bucketOf(body);
      const name = body.indexName;
      if (typeof name !== 'string' || !INDEX_NAME.test(name)) throw invalid('Invalid index name');
      if (body.dataType !== 'float32') throw invalid('dataType must be float32');
      const dimension = int(body, 'dimension', 1, LIMITS.maxDimension);
      if (body.distanceMetric !== 'cosine' && body.distanceMetric !== 'euclidean')
        throw invalid('distanceMetric must be cosine or euclidean');
      const nonFilterable =
        (body.metadataConfiguration as { nonFilterableMetadataKeys?: unknown } | undefined)
          ?.nonFilterableMetadataKeys ?? [];
      if (!Array.isArray(nonFilterable) || nonFilterable.length > LIMITS.maxNonFilterableKeys)
        throw invalid(`At most ${LIMITS.maxNonFilterableKeys} non-filterable metadata keys`);
      if (bucket.indexes.has(name)) throw conflict(`An index named ${name} already exists`);
      const index: VectorIndex = {
        name,
        dimension,
        distanceMetric: body.distanceMetric,
        nonFilterable: nonFilterable as string[],
        creationTime: Date.now(),
        vectors: new VectorSlots(dimension),
      };
      bucket.indexes.set(name, index);
      if (dir) writeSettings(dir, bucket.name, index);
      return { indexArn: arn(bucket.name, name) };
    },
    GetIndex(body) {
      const [bucket, index] = indexOf(body);
      return {
        index: {
          vectorBucketName: bucket.name,
          indexName: index.name,
          indexArn: arn(bucket.name, index.name),
          creationTime: index.creationTime / 1000,
          dataType: 'float32',
          dimension: index.dimension,
          distanceMetric: index.distanceMetric,
          metadataConfiguration: index.nonFilterable.length
            ? { nonFilterableMetadataKeys: index.nonFilterable }
            : undefined,
        },
      };
    },
    ListIndexes(body) {
      const bucket = bucketOf(body);
      const prefix = typeof body.prefix === 'string' ? body.prefix : '';
      const names = [...bucket.indexes.keys()].filter((n) => n.startsWith(prefix)).sort();
      return {
        indexes: names.map((n) => ({
          vectorBucketName: bucket.name,
          indexName: n,
          indexArn: arn(bucket.name, n),
          creationTime: bucket.indexes.get(n)!.creationTime / 1000,
        })),
      };
    },
    DeleteIndex(body) {
      const [bucket, index] = indexOf(body);
      bucket.indexes.delete(index.name);
      if (dir) {
        rmSync(settingsFile(dir, bucket.name, index.name), { force: true });
        rmSync(logFile(dir, bucket.name, index.name), { force: true });
      }
      return {};
    },
    PutVectors(body) {
      const [bucket, index] = indexOf(body);
      const vectors = body.vectors;
      if (!Array.isArray(vectors) || vectors.length < 1 || vectors.length > LIMITS.maxPut)
        throw invalid(`vectors must hold between 1 and ${LIMITS.maxPut} vectors`);
      const checked = vectors.map((v: { key?: unknown; data?: unknown; metadata?: unknown }, i) => {
        const what = `vectors[${i}]`;
        if (typeof v.key !== 'string' || v.key.length < 1 || v.key.length > LIMITS.maxKeyLength)
          throw invalid(`${what}: key must be 1 to ${LIMITS.maxKeyLength} characters`);
        const data = float32Of(v.data, index.dimension, what);
        if (index.distanceMetric === 'cosine' && data.every((x) => x === 0))
          throw invalid(`${what}: a zero vector has no cosine distance`);
        let metadata: Metadata | undefined;
        if (v.metadata !== undefined) {
          if (typeof v.metadata !== 'object' || v.metadata === null || Array.isArray(v.metadata))
            throw invalid(`${what}: metadata must be an object`);
          metadata = v.metadata as Metadata;
          const keys = Object.keys(metadata);
          if (keys.length > LIMITS.maxMetadataKeys)
            throw invalid(`${what}: more than ${LIMITS.maxMetadataKeys} metadata keys`);
          for (const k of keys) checkMetadataValue(k, metadata[k]);
          if (metadataBytes(metadata, keys) > LIMITS.maxMetadataBytes)
            throw invalid(`${what}: metadata is larger than ${LIMITS.maxMetadataBytes} bytes`);
          const filterable = keys.filter((k) => !index.nonFilterable.includes(k));
          if (metadataBytes(metadata, filterable) > LIMITS.maxFilterableMetadataBytes)
            throw invalid(`${what}: filterable metadata is larger than ${LIMITS.maxFilterableMetadataBytes} bytes`);
        }
        return { key: v.key, data, metadata };
      });
      // Checked whole before any is written: a refused request changes nothing.
      for (const v of checked) index.vectors.set(v.key, v.data, v.metadata);
      appendLog(
        bucket,
        index,
        checked.map((v) => putRecord(v.key, v.data, v.metadata)),
      );
      return {};
    },
    GetVectors(body) {
      const [, index] = indexOf(body);
      const keys = keysOf(body, LIMITS.maxGet);
      return {
        vectors: keys.flatMap((k) => {
          const v = index.vectors.get(k);
          return v ? [describe(k, v, body.returnData === true, body.returnMetadata === true)] : [];
        }),
      };
    },
    DeleteVectors(body) {
      const [bucket, index] = indexOf(body);
      const keys = keysOf(body, LIMITS.maxDelete);
      for (const k of keys) index.vectors.delete(k);
      appendLog(bucket, index, keys.map(deleteRecord));
      return {};
    },
    ListVectors(body) {
      const [, index] = indexOf(body);
      const max = int(body, 'maxResults', 1, LIMITS.maxListPage, 500);
      const segments = int(body, 'segmentCount', 1, LIMITS.maxSegments, 1);
      const segment = int(body, 'segmentIndex', 0, segments - 1, 0);
      const start =
        body.nextToken === undefined ? 0 : Number(Buffer.from(String(body.nextToken), 'base64url').toString());
      if (!Number.isInteger(start) || start < 0) throw invalid('Invalid nextToken');
      const keys = [...index.vectors.keys()].sort().filter((_, i) => i % segments === segment);
      const page = keys.slice(start, start + max);
      return {
        vectors: page.map((k) =>
          describe(k, index.vectors.get(k)!, body.returnData === true, body.returnMetadata === true),
        ),
        nextToken: start + max < keys.length ? Buffer.from(String(start + max)).toString('base64url') : undefined,
      };
    },
    QueryVectors(body) {
      const [, index] = indexOf(body);
      const topK = int(body, 'topK', 1, LIMITS.maxTopK);
      const query = float32Of(body.queryVector, index.dimension, 'queryVector');
      const filter = body.filter;
      if (filter !== undefined) checkFilter(filter, index.nonFilterable);
      const best: { key: string; distance: number; metadata: Metadata | undefined }[] = [];
      let squares = 0;
      for (let i = 0; i < query.length; i++) squares += query[i]! * query[i]!;
      const queryNorm = Math.sqrt(squares);
      index.vectors.scan((key, block, offset, norm, metadata) => {
        if (filter !== undefined && !matchesFilter(metadata, filter as Record<string, unknown>)) return;
        const d = distance(index.distanceMetric, query, block, offset, queryNorm, norm);
        if (best.length === topK && d >= best[topK - 1]!.distance) return;
        let at = best.length;
        while (at > 0 && best[at - 1]!.distance > d) at--;
        best.splice(at, 0, { key, distance: d, metadata });
        if (best.length > topK) best.pop();
      });
      return {
        vectors: best.map((b) => ({
          key: b.key,
          distance: body.returnDistance === true ? b.distance : undefined,
          metadata: body.returnMetadata === true ? b.metadata : undefined,
        })),
        distanceMetric: index.distanceMetric,
      };
    },
  };

  const answer = (res: ServerResponse, status: number, body: unknown, errorType?: string) => {
    res.setHeader('content-type', 'application/json');
    if (errorType) res.setHeader('x-amzn-errortype', errorType);
    res.writeHead(status);
    res.end(JSON.stringify(body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const operation = new URL(req.url ?? '/', 'http://localhost').pathname.slice(1);
    try {
      const run = operations[operation];
      if (req.method !== 'POST' || !run)
        throw new ApiError('UnknownOperationException', 404, `Unknown operation ${operation}`);
      // Requests are SigV4-signed by the SDK; an unsigned one is refused as the service does.
      if (!String(req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 '))
        throw new ApiError('AccessDeniedException', 403, 'Missing or invalid signature');
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of req) {
        size += (chunk as Buffer).length;
        if (size > LIMITS.maxRequestBytes) throw invalid(`Request payload larger than ${LIMITS.maxRequestBytes} bytes`);
        chunks.push(chunk as Buffer);
      }
      let body: unknown;
      try {
        body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
      } catch {
        throw invalid('The request body is not valid JSON');
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw invalid('The request body must be an object');
      calls.set(operation, (calls.get(operation) ?? 0) + 1);
      answer(res, 200, run(body as Record<string, unknown>));
    } catch (err) {
      if (err instanceof ApiError) answer(res, err.status, { message: err.message }, err.type);
      else answer(res, 500, { message: 'Internal error' }, 'InternalServerException');
    }
  };

  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    vectorKeys: (bucket, index) => {
      const found = buckets.get(bucket)?.indexes.get(index);
      return found ? [...found.vectors.keys()].sort() : undefined;
    },
    indexNames: (bucket) => [...(buckets.get(bucket)?.indexes.keys() ?? [])].sort(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        buckets.clear(); // what it held is garbage even while the stand-in object is still referenced
      }),
  };
}
