import { appendFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { checkFilter, distance, matchesFilter } from './filters.ts';
import {
  arn,
  BUCKET_NAME,
  checkMetadataValue,
  conflict,
  float32Of,
  INDEX_NAME,
  int,
  invalid,
  LIMITS,
  metadataBytes,
  notFound,
} from './limits.ts';
import { deleteRecord, logFile, putRecord, settingsFile, writeSettings } from './persistence.ts';
import { VectorSlots, type Metadata, type StoredVector, type VectorBucket, type VectorIndex } from './vector-slots.ts';

/** An operation of the service's API: the request's JSON body in, the answer's out. */
export type Operation = (body: Record<string, unknown>) => unknown;

/** The operations of the API on the buckets held; with a dir, what they change is kept there too. */
export function vectorOperations(
  buckets: Map<string, VectorBucket>,
  dir: string | undefined,
): Record<string, Operation> {
  const appendLog = (bucket: VectorBucket, index: VectorIndex, records: string[]) => {
    if (dir) appendFileSync(logFile(dir, bucket.name, index.name), records.join(''));
  };
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

  return {
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
}
