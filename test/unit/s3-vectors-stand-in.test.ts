import {
  CreateIndexCommand,
  CreateVectorBucketCommand,
  DeleteVectorsCommand,
  GetIndexCommand,
  GetVectorsCommand,
  ListVectorsCommand,
  PutVectorsCommand,
  QueryVectorsCommand,
  S3VectorsClient,
} from '@aws-sdk/client-s3vectors';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startS3Vectors, type S3VectorsStandIn } from '../../infra/local/s3-vectors.ts';

// The S3 Vectors stand-in against the API's documented behaviour, through the AWS SDK's own
// client (its wire protocol and error parsing): operations, limits, errors, distances, filters.

let standIn: S3VectorsStandIn;
let client: S3VectorsClient;
const bucket = 'test-vectors';

const clientFor = (url: string) =>
  new S3VectorsClient({
    endpoint: url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });

beforeAll(async () => {
  standIn = await startS3Vectors();
  client = clientFor(standIn.url);
  await client.send(new CreateVectorBucketCommand({ vectorBucketName: bucket }));
});
afterAll(async () => {
  client.destroy();
  await standIn.close();
});

/** `k0`, `k1`, … : `n` vector keys. */
const keyNames = (n: number) => Array.from({ length: n }, (_, i) => `k${i}`);

/** The error the SDK raises for a command: its name and HTTP status. */
async function failure(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined }> {
  try {
    await promise;
  } catch (err) {
    const e = err as { name: string; $metadata?: { httpStatusCode?: number } };
    return { name: e.name, status: e.$metadata?.httpStatusCode };
  }
  throw new Error('expected the request to fail');
}

/** The vectors of `keys` an index holds (absent keys left out), with their data and metadata. */
const vectorsOf = async (c: S3VectorsClient, vectorBucketName: string, indexName: string, keys: string[]) =>
  (await c.send(new GetVectorsCommand({ vectorBucketName, indexName, keys, returnData: true, returnMetadata: true })))
    .vectors;

const createIndex = (
  indexName: string,
  dimension: number,
  distanceMetric: 'cosine' | 'euclidean' = 'cosine',
  nonFilterable?: string[],
) =>
  client.send(
    new CreateIndexCommand({
      vectorBucketName: bucket,
      indexName,
      dataType: 'float32',
      dimension,
      distanceMetric,
      metadataConfiguration: nonFilterable ? { nonFilterableMetadataKeys: nonFilterable } : undefined,
    }),
  );

test('buckets and indexes: names, dimension 1–4,096, metric; a second create is a 409 ConflictException; a missing one a 404 NotFoundException', async () => {
  expect(await failure(client.send(new CreateVectorBucketCommand({ vectorBucketName: bucket })))).toEqual({
    name: 'ConflictException',
    status: 409,
  });
  expect(await failure(client.send(new CreateVectorBucketCommand({ vectorBucketName: 'Bad_Name' })))).toEqual({
    name: 'ValidationException',
    status: 400,
  });
  await createIndex('idx-a', 3);
  expect(await failure(createIndex('idx-a', 3))).toEqual({ name: 'ConflictException', status: 409 });
  expect(await failure(createIndex('idx-zero', 0))).toEqual({ name: 'ValidationException', status: 400 });
  expect(await failure(createIndex('idx-big', 4097))).toEqual({ name: 'ValidationException', status: 400 });
  await createIndex('idx-max', 4096);
  expect(await failure(createIndex('-bad', 3))).toEqual({ name: 'ValidationException', status: 400 });
  const got = await client.send(new GetIndexCommand({ vectorBucketName: bucket, indexName: 'idx-a' }));
  expect(got.index).toMatchObject({ indexName: 'idx-a', dimension: 3, distanceMetric: 'cosine', dataType: 'float32' });
  expect(await failure(client.send(new GetIndexCommand({ vectorBucketName: bucket, indexName: 'nope' })))).toEqual({
    name: 'NotFoundException',
    status: 404,
  });
  expect(
    await failure(client.send(new GetIndexCommand({ vectorBucketName: 'no-such-bucket', indexName: 'idx-a' }))),
  ).toEqual({ name: 'NotFoundException', status: 404 });
});

test('PutVectors: 1 to 500 vectors of the index dimension, metadata within 2 KB filterable and 40 KB in all; a refused request writes nothing', async () => {
  await createIndex('idx-put', 2, 'cosine', ['note']);
  const vector = (key: string, metadata?: Record<string, string>) => ({
    key,
    data: { float32: [1, 0] },
    metadata,
  });
  const put = (vectors: ReturnType<typeof vector>[]) =>
    client.send(new PutVectorsCommand({ vectorBucketName: bucket, indexName: 'idx-put', vectors }));
  await put(Array.from({ length: 500 }, (_, i) => vector(`k${i}`)));
  expect(standIn.vectorKeys(bucket, 'idx-put')).toHaveLength(500);
  expect(await failure(put(Array.from({ length: 501 }, (_, i) => vector(`x${i}`))))).toEqual({
    name: 'ValidationException',
    status: 400,
  });
  expect(await failure(put([]))).toEqual({ name: 'ValidationException', status: 400 });
  const wrongSize = { key: 'w', data: { float32: [1, 0, 0] } };
  expect(
    await failure(
      client.send(
        new PutVectorsCommand({ vectorBucketName: bucket, indexName: 'idx-put', vectors: [vector('ok'), wrongSize] }),
      ),
    ),
  ).toEqual({ name: 'ValidationException', status: 400 });
  expect(standIn.vectorKeys(bucket, 'idx-put')).not.toContain('ok');
  // Filterable metadata over 2 KB is refused; the same bytes under a non-filterable key pass.
  expect(await failure(put([vector('f', { text: 'x'.repeat(2100) })]))).toEqual({
    name: 'ValidationException',
    status: 400,
  });
  await put([vector('n', { note: 'x'.repeat(2100) })]);
  expect(await failure(put([vector('big', { note: 'x'.repeat(41 * 1024) })]))).toEqual({
    name: 'ValidationException',
    status: 400,
  });
  expect(await failure(put([vector('', {})]))).toEqual({ name: 'ValidationException', status: 400 });
  expect(
    await failure(
      client.send(new PutVectorsCommand({ vectorBucketName: bucket, indexName: 'missing', vectors: [vector('a')] })),
    ),
  ).toEqual({ name: 'NotFoundException', status: 404 });
});

test('QueryVectors: cosine and euclidean distances, nearest first; topK 1–100; the query of the index dimension', async () => {
  await createIndex('idx-cos', 2);
  await createIndex('idx-euc', 2, 'euclidean');
  const vectors = [
    { key: 'east', data: { float32: [1, 0] } },
    { key: 'north', data: { float32: [0, 3] } },
    { key: 'north-east', data: { float32: [2, 2] } },
  ];
  for (const indexName of ['idx-cos', 'idx-euc'])
    await client.send(new PutVectorsCommand({ vectorBucketName: bucket, indexName, vectors }));
  const query = (indexName: string, topK: number, q = [1, 0.1]) =>
    client.send(
      new QueryVectorsCommand({
        vectorBucketName: bucket,
        indexName,
        topK,
        queryVector: { float32: q },
        returnDistance: true,
      }),
    );
  const cos = await query('idx-cos', 3);
  expect(cos.vectors!.map((v) => v.key)).toEqual(['east', 'north-east', 'north']);
  expect(cos.vectors![0]!.distance).toBeCloseTo(1 - 1 / Math.sqrt(1.01), 5);
  expect(cos.distanceMetric).toBe('cosine');
  const euc = await query('idx-euc', 2, [2, 2.5]);
  expect(euc.vectors!.map((v) => v.key)).toEqual(['north-east', 'north']);
  expect(euc.vectors![0]!.distance).toBeCloseTo(0.5, 5);
  expect((await query('idx-cos', 100)).vectors).toHaveLength(3);
  expect(await failure(query('idx-cos', 101))).toEqual({ name: 'ValidationException', status: 400 });
  expect(await failure(query('idx-cos', 0))).toEqual({ name: 'ValidationException', status: 400 });
  expect(await failure(query('idx-cos', 3, [1, 0, 0]))).toEqual({ name: 'ValidationException', status: 400 });
});

test('filters: implicit equality, $eq on a list, $in, $nin, $ne, ranges, $exists, $and, $or; a non-filterable key or a bad operator is a 400', async () => {
  await createIndex('idx-filter', 2, 'cosine', ['body']);
  const at = (key: string, metadata: Record<string, string | number | string[]>) => ({
    key,
    data: { float32: [1, 0] },
    metadata,
  });
  await client.send(
    new PutVectorsCommand({
      vectorBucketName: bucket,
      indexName: 'idx-filter',
      vectors: [
        at('a', { fileId: 'f1', page: 1, tags: ['x', 'y'], body: 'one' }),
        at('b', { fileId: 'f2', page: 5, tags: ['y'] }),
        at('c', { fileId: 'f3', page: 9 }),
      ],
    }),
  );
  const keys = async (filter: Record<string, unknown>) =>
    (
      await client.send(
        new QueryVectorsCommand({
          vectorBucketName: bucket,
          indexName: 'idx-filter',
          topK: 10,
          queryVector: { float32: [1, 0] },
          filter: filter as never,
        }),
      )
    )
      .vectors!.map((v) => v.key)
      .sort();
  expect(await keys({ fileId: 'f1' })).toEqual(['a']);
  expect(await keys({ tags: { $eq: 'y' } })).toEqual(['a', 'b']);
  expect(await keys({ fileId: { $in: ['f1', 'f3'] } })).toEqual(['a', 'c']);
  expect(await keys({ fileId: { $nin: ['f1'] } })).toEqual(['b', 'c']);
  expect(await keys({ fileId: { $ne: 'f2' } })).toEqual(['a', 'c']);
  expect(await keys({ page: { $gte: 5 } })).toEqual(['b', 'c']);
  expect(await keys({ page: { $lt: 5 } })).toEqual(['a']);
  expect(await keys({ tags: { $exists: false } })).toEqual(['c']);
  expect(await keys({ $and: [{ tags: 'y' }, { page: { $gt: 2 } }] })).toEqual(['b']);
  expect(await keys({ $or: [{ fileId: 'f1' }, { page: 9 }] })).toEqual(['a', 'c']);
  const query = (filter: unknown) =>
    client.send(
      new QueryVectorsCommand({
        vectorBucketName: bucket,
        indexName: 'idx-filter',
        topK: 1,
        queryVector: { float32: [1, 0] },
        filter: filter as never,
      }),
    );
  for (const bad of [
    { body: 'one' },
    { fileId: { $regex: 'f' } },
    { $and: [] },
    { fileId: { $in: [] } },
    { page: { $gt: 'a' } },
  ])
    expect(await failure(query(bad))).toEqual({ name: 'ValidationException', status: 400 });
});

test('GetVectors (≤ 100), DeleteVectors (≤ 500, missing keys are no error), ListVectors pages of ≤ 1,000', async () => {
  await createIndex('idx-list', 1);
  for (let i = 0; i < 3; i++)
    await client.send(
      new PutVectorsCommand({
        vectorBucketName: bucket,
        indexName: 'idx-list',
        vectors: Array.from({ length: 500 }, (_, j) => ({
          key: `k${i * 500 + j}`,
          data: { float32: [1] },
          metadata: { n: i * 500 + j },
        })),
      }),
    );
  expect(await vectorsOf(client, bucket, 'idx-list', ['k1', 'absent'])).toEqual([
    { key: 'k1', data: { float32: [1] }, metadata: { n: 1 } },
  ]);
  const over101 = new GetVectorsCommand({ vectorBucketName: bucket, indexName: 'idx-list', keys: keyNames(101) });
  expect(await failure(client.send(over101))).toEqual({ name: 'ValidationException', status: 400 });
  const listed: string[] = [];
  let nextToken: string | undefined;
  do {
    const page = await client.send(
      new ListVectorsCommand({ vectorBucketName: bucket, indexName: 'idx-list', maxResults: 1000, nextToken }),
    );
    expect(page.vectors!.length).toBeLessThanOrEqual(1000);
    listed.push(...page.vectors!.map((v) => v.key!));
    nextToken = page.nextToken;
  } while (nextToken);
  expect(new Set(listed).size).toBe(1500);
  expect(
    await failure(
      client.send(new ListVectorsCommand({ vectorBucketName: bucket, indexName: 'idx-list', maxResults: 1001 })),
    ),
  ).toEqual({ name: 'ValidationException', status: 400 });
  await client.send(
    new DeleteVectorsCommand({ vectorBucketName: bucket, indexName: 'idx-list', keys: ['k0', 'k1', 'never'] }),
  );
  expect(standIn.vectorKeys(bucket, 'idx-list')).toHaveLength(1498);
  const over501 = new DeleteVectorsCommand({ vectorBucketName: bucket, indexName: 'idx-list', keys: keyNames(501) });
  expect(await failure(client.send(over501))).toEqual({ name: 'ValidationException', status: 400 });
});

test('an unsigned request is a 403 AccessDeniedException', async () => {
  const res = await fetch(`${standIn.url}/GetIndex`, {
    method: 'POST',
    body: JSON.stringify({ vectorBucketName: bucket, indexName: 'idx-a' }),
  });
  expect(res.status).toBe(403);
  expect(res.headers.get('x-amzn-errortype')).toBe('AccessDeniedException');
});

test('with a data directory, indexes and vectors are kept across a restart', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 's3v-'));
  try {
    const first = await startS3Vectors({ dataDir });
    const c1 = clientFor(first.url);
    await c1.send(new CreateVectorBucketCommand({ vectorBucketName: 'kept' }));
    await c1.send(
      new CreateIndexCommand({
        vectorBucketName: 'kept',
        indexName: 'idx',
        dataType: 'float32',
        dimension: 2,
        distanceMetric: 'cosine',
      }),
    );
    await c1.send(
      new PutVectorsCommand({
        vectorBucketName: 'kept',
        indexName: 'idx',
        vectors: [{ key: 'a', data: { float32: [0.5, 0.25] }, metadata: { f: 'x' } }],
      }),
    );
    c1.destroy();
    await first.close();
    const second = await startS3Vectors({ dataDir });
    const c2 = clientFor(second.url);
    expect(await vectorsOf(c2, 'kept', 'idx', ['a'])).toEqual([
      { key: 'a', data: { float32: [0.5, 0.25] }, metadata: { f: 'x' } },
    ]);
    c2.destroy();
    await second.close();
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('a deleted vector’s place holds the next one written, and each key keeps its own values', async () => {
  await client.send(
    new CreateIndexCommand({
      vectorBucketName: bucket,
      indexName: 'idx-reuse',
      dataType: 'float32',
      dimension: 2,
      distanceMetric: 'euclidean',
    }),
  );
  const put = (key: string, float32: number[]) =>
    client.send(
      new PutVectorsCommand({
        vectorBucketName: bucket,
        indexName: 'idx-reuse',
        vectors: [{ key, data: { float32 }, metadata: { key } }],
      }),
    );
  await put('a', [1, 0]);
  await put('b', [2, 0]);
  await put('c', [3, 0]);
  await client.send(new DeleteVectorsCommand({ vectorBucketName: bucket, indexName: 'idx-reuse', keys: ['b'] }));
  await put('d', [4, 0]);
  await put('a', [5, 0]); // overwritten in place
  expect(await vectorsOf(client, bucket, 'idx-reuse', ['a', 'b', 'c', 'd'])).toEqual([
    { key: 'a', data: { float32: [5, 0] }, metadata: { key: 'a' } },
    { key: 'c', data: { float32: [3, 0] }, metadata: { key: 'c' } },
    { key: 'd', data: { float32: [4, 0] }, metadata: { key: 'd' } },
  ]);
  const near = await client.send(
    new QueryVectorsCommand({
      vectorBucketName: bucket,
      indexName: 'idx-reuse',
      queryVector: { float32: [4.2, 0] },
      topK: 3,
      returnDistance: true,
    }),
  );
  expect(near.vectors?.map((v) => [v.key, Math.round(v.distance! * 10) / 10])).toEqual([
    ['d', 0.2],
    ['a', 0.8],
    ['c', 1.2],
  ]);
});

test('with a data directory, overwrites and deletes are kept across restarts, and the earlier one-file format is read', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 's3v-'));
  const index = { vectorBucketName: 'kept', indexName: 'idx' };
  const read = (c: S3VectorsClient) => vectorsOf(c, index.vectorBucketName, index.indexName, ['a', 'b', 'c']);
  try {
    const first = await startS3Vectors({ dataDir });
    const c1 = clientFor(first.url);
    await c1.send(new CreateVectorBucketCommand({ vectorBucketName: 'kept' }));
    await c1.send(new CreateIndexCommand({ ...index, dataType: 'float32', dimension: 2, distanceMetric: 'cosine' }));
    await c1.send(
      new PutVectorsCommand({
        ...index,
        vectors: [
          { key: 'a', data: { float32: [1, 0] } },
          { key: 'b', data: { float32: [0, 1] } },
        ],
      }),
    );
    await c1.send(
      new PutVectorsCommand({ ...index, vectors: [{ key: 'a', data: { float32: [1, 1] }, metadata: { v: 2 } }] }),
    );
    await c1.send(new DeleteVectorsCommand({ ...index, keys: ['b'] }));
    c1.destroy();
    await first.close();

    const second = await startS3Vectors({ dataDir });
    const c2 = clientFor(second.url);
    expect(await read(c2)).toEqual([{ key: 'a', data: { float32: [1, 1] }, metadata: { v: 2 } }]);
    c2.destroy();
    await second.close();
    // Compacted when loaded: one line per vector held.
    const log = await readFile(join(dataDir, 's3-vectors', 'kept', 'idx.log'), 'utf8');
    expect(log.trim().split('\n')).toHaveLength(1);

    // An index saved whole in its settings file, as the stand-in once wrote it.
    const vector = Buffer.from(new Float32Array([0.5, 0.25]).buffer).toString('base64');
    await writeFile(
      join(dataDir, 's3-vectors', 'kept', 'old.json'),
      JSON.stringify({
        name: 'old',
        dimension: 2,
        distanceMetric: 'cosine',
        nonFilterable: [],
        creationTime: 0,
        vectors: [['c', vector, { f: 'x' }]],
      }),
    );
    const third = await startS3Vectors({ dataDir });
    const c3 = clientFor(third.url);
    expect(await vectorsOf(c3, 'kept', 'old', ['c'])).toEqual([
      { key: 'c', data: { float32: [0.5, 0.25] }, metadata: { f: 'x' } },
    ]);
    expect(await read(c3)).toEqual([{ key: 'a', data: { float32: [1, 1] }, metadata: { v: 2 } }]);
    c3.destroy();
    await third.close();
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
