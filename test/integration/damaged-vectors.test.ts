import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { decodePacked, encodePacked, packVectors } from '#shared/retrieval/packed-vectors.ts';
import { type TestApp, useTestApp } from '#test/helpers/app.ts';
import { fileChatWith } from '#test/helpers/files.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { rawRequest } from '#test/helpers/raw-request.ts';

// A completed file whose packed vectors object is damaged (cut short, overwritten, written by
// another embedding size, a lexical index pointing past its postings): a question in its chat
// answers the same typed 409 as a missing object ("ingest it again"), at once; never a 500, never
// a request that runs until the function's timeout. Each damage is written over the real object
// in the local S3, and the chat's function is asked afresh (a damaged object is never cached).

let s3: S3Client;
let chatId: string;
let fileId: string;
let key: string;
let original: Buffer;

const app = useTestApp(
  async () => ({
    pdfs: { '/animals.pdf': { body: Buffer.from(await makeTextPdf(3, 8)) } },
    user: 'damaged@example.com',
  }),
  { ready: storedPack },
);

/** Ingests the animals PDF into a file chat; keeps its packed vectors' key and bytes. */
async function storedPack(app: TestApp) {
  ({ s3 } = app.clients());
  ({ chatId, fileId } = await fileChatWith(app, app.token, '/animals.pdf', 'animals'));
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: app.bucket, Prefix: `vectors/${fileId}/` }));
  // The packed vectors (beside them: the run's page texts and PDF).
  const packs = listed.Contents!.filter((o) => o.Key!.endsWith('.pvec'));
  expect(packs).toHaveLength(1);
  key = packs[0]!.Key!;
  const got = await s3.send(new GetObjectCommand({ Bucket: app.bucket, Key: key }));
  original = Buffer.from(await got.Body!.transformToByteArray());
}

/** The real pack with its lexical index's row offsets pointing far past its postings. */
function lexicalPastItsEnd(): Buffer {
  const pack = decodePacked(original);
  expect(pack.lexical).toBeDefined();
  pack.lexical!.termStart.fill(0xfffffff0, 1);
  return encodePacked(pack);
}

/** A well-formed pack of the same chunks, written by an embedding of another size. */
function otherDimensions(): Buffer {
  const pack = decodePacked(original);
  const rows = Array.from(pack.chunk, (chunk, i) => ({
    chunk,
    page: pack.page[i]!,
    vector: Float32Array.from({ length: pack.dimensions + 5 }, (_, d) => ((d * 7 + i) % 11) - 5),
  }));
  return encodePacked(packVectors(rows, pack.dimensions + 5));
}

const damages: [string, () => Buffer][] = [
  ['zero-length', () => Buffer.alloc(0)],
  ['truncated to half', () => original.subarray(0, Math.floor(original.length / 2))],
  ['cut by one byte', () => original.subarray(0, original.length - 1)],
  ['a wrong magic', () => Buffer.concat([Buffer.from('XVEC'), original.subarray(4)])],
  [
    'an unknown version',
    () => Buffer.concat([original.subarray(0, 4), Buffer.from([9, 0, 0, 0]), original.subarray(8)]),
  ],
  [
    'a header counting more rows than the body holds',
    () => {
      const copy = Buffer.from(original);
      copy.writeUInt32LE(copy.readUInt32LE(8) * 4 + 1, 8);
      return copy;
    },
  ],
  // Before the fix this one ran the index's loops for billions of steps: the prompt hung.
  ['a lexical index pointing past its postings', lexicalPastItsEnd],
  ['other dimensions', otherDimensions],
  ['garbage', () => Buffer.from(Array.from({ length: original.length }, (_, i) => (i * 131 + 17) % 256))],
  ['garbage behind a valid magic', () => Buffer.concat([original.subarray(0, 4), Buffer.alloc(4096, 0xff)])],
];

test.each(damages)('a pack %s: 409 FILE_DATA_MISSING naming the file, at once', async (_, damage) => {
  await s3.send(new PutObjectCommand({ Bucket: app.bucket, Key: key, Body: damage() }));
  const res = await rawRequest({
    method: 'POST',
    base: app.url,
    path: '/message/logged-in',
    headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ chatId, prompt: knownSentence(2, 3) }),
    // A hang fails here rather than at the function's 300 s timeout.
    timeoutMs: 60_000,
  });
  expect(res.status).toBe(409);
  expect(res.json).toMatchObject({ success: false, statusCode: 409 });
  expect(res.json.message).toContain(`"animals.pdf" (file ${fileId})`);
  expect(res.json.message).toMatch(/ingest it again: POST \/message\/pdf .*"force": true/);
});

test('the original object written back: the chat answers with sources again', async () => {
  await s3.send(new PutObjectCommand({ Bucket: app.bucket, Key: key, Body: original }));
  const res = await app.request('POST', '/message/logged-in', {
    token: app.token,
    body: { chatId, prompt: knownSentence(2, 3) },
  });
  expect(res.status).toBe(200);
  expect(res.body.data.sources[0]).toMatchObject({ fileId, page: 2 });
});
