import { CreateVectorBucketCommand, S3VectorsClient } from '@aws-sdk/client-s3vectors';
import { startS3Vectors, type S3VectorsStandIn } from '../../infra/local/s3-vectors.ts';
import { s3VectorsApiOf } from '#shared/retrieval/s3-vectors-api.ts';
import { indexName, S3VectorsStore, type RunRef, type VectorRow } from '#shared/retrieval/vector-store.ts';
import { memoryStorage } from '#test/helpers/memory-storage.ts';

// The S3 Vectors backend of the vector store against the stand-in: what it writes (batches of
// ≤ 500, one index per user and model), what a query returns (only the files' current runs),
// and that every removal finds the keys it wrote from the lexical objects.

let standIn: S3VectorsStandIn;
let client: S3VectorsClient;
const bucket = 'unit-vectors';
const DIMENSIONS = 4;

beforeAll(async () => {
  standIn = await startS3Vectors();
  client = new S3VectorsClient({
    endpoint: standIn.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await client.send(new CreateVectorBucketCommand({ vectorBucketName: bucket }));
});
afterAll(async () => {
  client.destroy();
  await standIn.close();
});

const rows = (count: number, from = 0, vector = [1, 0, 0, 0]): VectorRow[] =>
  Array.from({ length: count }, (_, i) => ({
    chunk: from + i,
    page: 1,
    vector: Float32Array.from(vector.map((v, d) => v + (d === 1 ? (from + i) / 10_000 : 0))),
    text: `chunk ${from + i} about herons`,
  }));

const store = () => new S3VectorsStore(memoryStorage(), s3VectorsApiOf(client), bucket);
const model = 'text-embedding-3-small';
const keysOf = (userId: string, fileId: string) =>
  (standIn.vectorKeys(bucket, indexName(userId, model, DIMENSIONS)) ?? []).filter((k) => k.startsWith(`${fileId}#`));

test('index names follow the service rules (3–63 lowercase letters, digits, hyphens), one per user and model', () => {
  const name = indexName(
    'User|With_Odd.Chars-and-a-very-long-identifier-0123456789',
    'amazon.titan-embed-text-v2:0',
    1024,
  );
  expect(name).toMatch(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/);
  expect(indexName('a', model, 1536)).not.toBe(indexName('b', model, 1536));
  expect(indexName('a', model, 1536)).not.toBe(indexName('a', 'other-model', 1536));
});

test('a part of 1,200 rows is put in batches of ≤ 500; a query returns only the current runs of the files named', async () => {
  const vectors = store();
  const ref: RunRef = { userId: 'u1', fileId: 'file-a', runId: 'run-2', model };
  const before = standIn.calls.get('PutVectors') ?? 0;
  await vectors.writePart(ref, 0, rows(1200), DIMENSIONS);
  expect((standIn.calls.get('PutVectors') ?? 0) - before).toBe(3);
  expect(keysOf('u1', 'file-a')).toHaveLength(1200);
  // A superseded run of the same file, nearer to the query, and another file of the user.
  await vectors.writePart({ ...ref, runId: 'run-1' }, 0, rows(5, 0, [0, 0, 0, 1]), DIMENSIONS);
  await vectors.writePart({ ...ref, fileId: 'file-b', runId: 'run-b' }, 0, rows(5, 0, [0, 0, 0, 1]), DIMENSIONS);
  const hits = await vectors.query({
    userId: 'u1',
    model,
    vector: Float32Array.from([0, 0, 0, 1]),
    topK: 10,
    files: [{ fileId: 'file-a', runId: 'run-2' }],
  });
  expect(hits).toHaveLength(10);
  expect(hits.every((h) => h.fileId === 'file-a' && h.chunk < 1200)).toBe(true);
  const both = await vectors.query({
    userId: 'u1',
    model,
    vector: Float32Array.from([0, 0, 0, 1]),
    topK: 5,
    files: [
      { fileId: 'file-a', runId: 'run-2' },
      { fileId: 'file-b', runId: 'run-b' },
    ],
  });
  expect(both.map((h) => h.fileId)).toEqual(Array(5).fill('file-b'));
  expect(both[0]!.score).toBeCloseTo(1, 3);
  // Another user, or a model the user never wrote with: nothing (no index), not an error.
  expect(
    await vectors.query({
      userId: 'u2',
      model,
      vector: Float32Array.from([0, 0, 0, 1]),
      topK: 5,
      files: [{ fileId: 'file-a', runId: 'run-2' }],
    }),
  ).toEqual([]);
});

test('removals find the keys they wrote: a part of a run that ended, a superseded run, then the whole file', async () => {
  const vectors = store();
  const ref: RunRef = { userId: 'u3', fileId: 'file-c', runId: 'run-1', model };
  await vectors.writePart(ref, 0, rows(3), DIMENSIONS);
  await vectors.writePart(ref, 1, rows(3, 3), DIMENSIONS);
  const gathered = await vectors.gatherRun(ref, 2);
  expect(gathered).toEqual({ key: 'vectors/file-c/run-1.plex', count: 6, dimensions: 0 });
  expect(keysOf('u3', 'file-c')).toHaveLength(6);

  // A newer run: one part written, then the run ends (its part removed by the embed stage).
  const newer = { ...ref, runId: 'run-2' };
  await vectors.writePart(newer, 0, rows(2), DIMENSIONS);
  await vectors.removePart(newer, 0, [0, 1], DIMENSIONS);
  expect(keysOf('u3', 'file-c').filter((k) => k.includes('#run-2#'))).toEqual([]);

  // Run 2 again, completed: run 1 superseded, its vectors removed through its lexical object.
  await vectors.writePart(newer, 0, rows(4), DIMENSIONS);
  await vectors.removeRun('u3', 'file-c', gathered.key);
  expect(keysOf('u3', 'file-c').every((k) => k.includes('#run-2#'))).toBe(true);
  expect(keysOf('u3', 'file-c')).toHaveLength(4);

  // Another file of the same user stays when this one is deleted.
  await vectors.writePart({ ...ref, fileId: 'file-d' }, 0, rows(2), DIMENSIONS);
  await vectors.removeFile('u3', 'file-c');
  expect(keysOf('u3', 'file-c')).toEqual([]);
  expect(keysOf('u3', 'file-d')).toHaveLength(2);
});
