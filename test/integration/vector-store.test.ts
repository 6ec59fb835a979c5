import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { startPdfServer, type PdfServer } from '#test/helpers/pdf-server.ts';
import { until } from '#test/helpers/until.ts';
import { erasureDeps } from '#test/helpers/erasure-deps.ts';
import { resumeErasures } from '#shared/erasure/erasure.ts';

// The two vector stores through the gateway, with the offline provider: a service deployed with
// packs ingests a PDF; the same service redeployed with VECTOR_STORE=s3vectors (the S3 Vectors
// stand-in) ingests the same bytes as another file. A prompt gets the same sources from both
// backends; the file ingested before the switch keeps answering; deleting a file removes its
// vectors from the index, an erasure all of the user's.

/** One PDF server for both deployments: a file is attached again by the URL it was ingested from. */
let pdfs: PdfServer;
let app: TestApp | undefined;
const SMALL_CHUNKS = { CHUNK_TOKENS: '120', CHUNK_OVERLAP_TOKENS: '0', RETRIEVAL_K: '4' };

beforeAll(async () => {
  pdfs = await startPdfServer();
  pdfs.serve('/book.pdf', { body: Buffer.from(await makeTextPdf(4, 10)) });
  pdfs.serve('/other.pdf', { body: Buffer.from(await makeTextPdf(2, 12)) });
});
afterAll(async () => {
  await app?.stop();
  await pdfs?.close();
});

async function ingest(a: TestApp, token: string, chatId: string, path: string, fileName: string): Promise<string> {
  const upload = await a.request('POST', '/upload', {
    token,
    body: { fileName, contentType: 'application/pdf', size: 5000 },
  });
  const fileId = upload.body.data.fileId;
  const res = await a.request('POST', '/message/pdf', { token, body: { url: `${pdfs.url}${path}`, fileId, chatId } });
  expect(res.body.data.embeddingsData.status).toBe('completed');
  return fileId;
}

const newFileChat = async (a: TestApp, token: string, name: string) =>
  (await a.request('POST', '/chat', { token, body: { name, type: 'file' } })).body.data.id as string;

/** A prompt's sources, as a reader sees them (file name, page, chunk, quote). */
async function sourcesOf(a: TestApp, token: string, chatId: string, prompt: string) {
  const res = await a.request('POST', '/message/logged-in', { token, body: { chatId, prompt } });
  expect(res.status).toBe(200);
  return (
    res.body.data.sources as { fileId: string; fileName: string; page: number; chunk: number; quote: string }[]
  ).map((s) => ({ fileId: s.fileId, fileName: s.fileName, page: s.page, chunk: s.chunk, quote: s.quote }));
}

test('packs, then S3 Vectors: the same sources for the same PDF; the file ingested before the switch keeps answering; a delete removes the vectors', async () => {
  // 1. Deployed with packs (the default).
  const packs = await startTestApp({ env: SMALL_CHUNKS });
  app = packs;
  let { token } = await packs.signIn('library@example.com');
  const packsChat = await newFileChat(packs, token, 'packs');
  const before = await ingest(packs, token, packsChat, '/book.pdf', 'book.pdf');
  const prompts = [knownSentence(3, 4), knownSentence(1, 7), 'folio 4.2'];
  const packsSources = [];
  for (const prompt of prompts) packsSources.push(await sourcesOf(packs, token, packsChat, prompt));
  expect(packsSources[0]![0]).toMatchObject({ fileId: before, page: 3 });
  await packs.stop({ keep: true });
  app = undefined;
  // A new deployment: none of the first one's settings (its ports) stay in this process.
  for (const k of Object.keys(packs.env)) delete process.env[k];

  // 2. Redeployed with VECTOR_STORE=s3vectors, on the same table and bucket.
  const vectors = await startTestApp({
    vectorStore: 's3vectors',
    env: SMALL_CHUNKS,
    after: { resourcePrefix: packs.resourcePrefix, dataDir: packs.dataDir },
  });
  app = vectors;
  ({ token } = await vectors.signIn('library@example.com'));
  const standIn = vectors.s3Vectors!;
  const bucket = vectors.config.S3_VECTORS_BUCKET!;
  const vectorsChat = await newFileChat(vectors, token, 's3vectors');
  const after = await ingest(vectors, token, vectorsChat, '/book.pdf', 'book.pdf');
  const [index] = standIn.indexNames(bucket);
  expect(standIn.indexNames(bucket)).toHaveLength(1);
  const keysOf = (fileId: string) =>
    (standIn.vectorKeys(bucket, index!) ?? []).filter((k) => k.startsWith(`${fileId}#`));
  expect(keysOf(after).length).toBeGreaterThan(3);
  expect(keysOf(before)).toEqual([]); // the packs file was not copied
  expect(standIn.calls.get('QueryVectors') ?? 0).toBe(0);

  // The same sources, the vectors now read from the index.
  for (const [i, prompt] of prompts.entries()) {
    const got = await sourcesOf(vectors, token, vectorsChat, prompt);
    expect(got).toEqual(packsSources[i]!.map((s) => ({ ...s, fileId: after })));
  }
  expect(standIn.calls.get('QueryVectors')).toBe(prompts.length);

  // The file ingested with packs still answers, alone and beside a file in the index (each
  // prompt in a chat of its own: a chat's history shapes its next retrieval).
  const chatWith = async (name: string, files: [fileId: string, path: string][]) => {
    const chatId = await newFileChat(vectors, token, name);
    for (const [fileId, path] of files) {
      const res = await vectors.request('POST', '/message/pdf', {
        token,
        body: { url: `${pdfs.url}${path}`, fileId, chatId },
      });
      expect(res.body.data.embeddingsData.status).toBe('completed');
    }
    return chatId;
  };
  expect(await sourcesOf(vectors, token, await chatWith('old', [[before, '/book.pdf']]), prompts[0]!)).toEqual(
    packsSources[0],
  );
  const bothChat = await newFileChat(vectors, token, 'both');
  const other = await ingest(vectors, token, bothChat, '/other.pdf', 'other.pdf');
  /** The sources of a question in a new chat with both files (one in packs, one in the index). */
  const askBoth = async (name: string, prompt: string) =>
    sourcesOf(
      vectors,
      token,
      await chatWith(name, [
        [before, '/book.pdf'],
        [other, '/other.pdf'],
      ]),
      prompt,
    );
  const mixed = await askBoth('mixed-1', knownSentence(3, 4));
  expect(mixed[0]).toMatchObject({ fileId: before, page: 3 });
  const fromIndex = await askBoth('mixed-2', knownSentence(2, 11));
  expect(fromIndex[0]).toMatchObject({ fileId: other, page: 2 });

  // Deleting the file removes its vectors from the index; the other file's stay.
  expect((await vectors.request('DELETE', `/upload/${after}`, { token })).status).toBe(200);
  expect(keysOf(after)).toEqual([]);
  expect(keysOf(other).length).toBeGreaterThan(0);

  // Erasing the account removes the rest.
  expect((await vectors.request('DELETE', '/me', { token })).status).toBe(202);
  // Within the request or by the sweep (erasure.test.ts): finished by the sweep's own pass.
  const left = await until(
    'the erasure to finish',
    async () => {
      await resumeErasures(erasureDeps(vectors));
      return standIn.vectorKeys(bucket, index!) ?? [];
    },
    (keys) => keys.length === 0,
  );
  expect(left).toEqual([]);
});
