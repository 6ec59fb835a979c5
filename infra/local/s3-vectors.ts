import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync, rmSync } from 'node:fs';
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
// With a dataDir (npm start), each index is kept in dataDir/s3-vectors/<bucket>/<index>.json,
// written after every change.

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

interface VectorIndex {
  name: string;
  dimension: number;
  distanceMetric: 'cosine' | 'euclidean';
  nonFilterable: string[];
  creationTime: number;
  vectors: Map<string, StoredVector>;
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

function distance(metric: VectorIndex['distanceMetric'], a: Float32Array, b: Float32Array, bNorm?: number): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  let sq = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (metric === 'euclidean') {
      sq += (x - y) * (x - y);
    } else {
      dot += x * y;
      na += x * x;
      if (bNorm === undefined) nb += y * y;
    }
  }
  if (metric === 'euclidean') return Math.sqrt(sq);
  const norms = Math.sqrt(na) * (bNorm ?? Math.sqrt(nb));
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

export async function startS3Vectors(options: S3VectorsOptions = {}): Promise<S3VectorsStandIn> {
  const buckets = new Map<string, VectorBucket>();
  const calls = new Map<string, number>();
  const dir = options.dataDir ? join(options.dataDir, 's3-vectors') : undefined;

  const save = (bucket: VectorBucket, index?: VectorIndex) => {
    if (!dir) return;
    const bucketDir = join(dir, bucket.name);
    mkdirSync(bucketDir, { recursive: true });
    if (!index) return;
    const file = join(bucketDir, `${index.name}.json`);
    const saved = {
      name: index.name,
      dimension: index.dimension,
      distanceMetric: index.distanceMetric,
      nonFilterable: index.nonFilterable,
      creationTime: index.creationTime,
      vectors: [...index.vectors].map(([key, v]) => [
        key,
        Buffer.from(v.data.buffer, v.data.byteOffset, v.data.byteLength).toString('base64'),
        v.metadata,
      ]),
    };
    writeFileSync(`${file}.tmp`, JSON.stringify(saved));
    renameSync(`${file}.tmp`, file);
  };
  if (dir) {
    mkdirSync(dir, { recursive: true });
    for (const name of readdirSync(dir)) {
      const bucket: VectorBucket = { name, creationTime: Date.now(), indexes: new Map() };
      for (const file of readdirSync(join(dir, name)).filter((f) => f.endsWith('.json'))) {
        const saved = JSON.parse(readFileSync(join(dir, name, file), 'utf8'));
        bucket.indexes.set(saved.name, {
          ...saved,
          vectors: new Map(
            (saved.vectors as [string, string, Metadata | undefined][]).map(([key, data, metadata]) => {
              const bytes = Buffer.from(data, 'base64');
              const copy = new Uint8Array(bytes.byteLength);
              copy.set(bytes);
              return [key, { data: new Float32Array(copy.buffer), metadata: metadata ?? undefined }];
            }),
          ),
        });
      }
      buckets.set(name, bucket);
    }
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
      save(bucket);
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
        vectors: new Map(),
      };
      bucket.indexes.set(name, index);
      save(bucket, index);
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
      if (dir) rmSync(join(dir, bucket.name, `${index.name}.json`), { force: true });
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
      for (const v of checked) index.vectors.set(v.key, { data: v.data, metadata: v.metadata });
      save(bucket, index);
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
      for (const k of keysOf(body, LIMITS.maxDelete)) index.vectors.delete(k);
      save(bucket, index);
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
      const best: { key: string; distance: number; v: StoredVector }[] = [];
      for (const [key, v] of index.vectors) {
        if (filter !== undefined && !matchesFilter(v.metadata, filter as Record<string, unknown>)) continue;
        const d = distance(index.distanceMetric, query, v.data);
        if (best.length === topK && d >= best[topK - 1]!.distance) continue;
        let at = best.length;
        while (at > 0 && best[at - 1]!.distance > d) at--;
        best.splice(at, 0, { key, distance: d, v });
        if (best.length > topK) best.pop();
      }
      return {
        vectors: best.map((b) => ({
          key: b.key,
          distance: body.returnDistance === true ? b.distance : undefined,
          metadata: body.returnMetadata === true ? b.v.metadata : undefined,
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
      }),
  };
}
