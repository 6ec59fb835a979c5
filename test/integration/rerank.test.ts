import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { makePdfFromLines } from '#test/helpers/make-pdf.ts';
import { until } from '#test/helpers/until.ts';

// The rerank stage in the running service (RERANK_PROVIDER=cohere against the loopback stand-in):
// POST /search and a file chat's reply take the reranker's order; when it errs or does not answer
// in time, they answer all the same, in the retrieval order (the order the candidates were sent in).

let app: TestApp;
let token: string;
let fileId: string;

/** Words none of the query's, named for their page (every sentence unique): a page is about one chunk. */
const FILLER = (name: string) => [
  `Gulls circle above the ${name} quay while nets dry on the stone wall beside the painted sheds.`,
  `Children race along the ${name} sea front and the ferry sounds its horn twice at noon.`,
  `Rain often clears by evening in ${name}, when the cafes put their chairs out on the square.`,
];
const PAGES = [
  'The harbour master keeps the tide tables for every pier of the town.',
  'Lighthouse keepers once trimmed the lamp wicks every four hours of the night.',
  'The lighthouse keeper of the northern cape logs every passing ship and lamp hours.',
  'Fishing boats leave before dawn and sell their catch at the morning market.',
  'The old lighthouse was built of granite blocks carried from the quarry by sea.',
].map((sentence, i) => [sentence, ...FILLER(['Alder', 'Birch', 'Cedar', 'Dunmore', 'Elmsby'][i]!)]);
const QUERY = 'lighthouse keeper lamp hours';

const search = (k = 3) => app.request('POST', '/search', { token, body: { query: QUERY, fileIds: [fileId], k } });
/** The documents the reranker was last sent (the candidates, in retrieval order). */
const sentDocuments = (): string[] => app.reranker.requests.at(-1)!.body.documents;
const positionIn = (documents: string[], quote: string) => documents.findIndex((d) => d.includes(quote));

beforeAll(async () => {
  app = await startTestApp({
    pdfs: { '/harbour.pdf': { body: Buffer.from(await makePdfFromLines(PAGES)) } },
    reranker: true,
    env: {
      RERANK_MODEL: 'rerank-v3.5',
      RERANK_TIMEOUT_MS: '300',
      // About one chunk a page.
      CHUNK_TOKENS: '50',
      CHUNK_OVERLAP_TOKENS: '0',
    },
  });
  token = (await app.signIn('reranked@example.com')).token;
  fileId = (
    await app.request('POST', '/upload', {
      token,
      body: { fileName: 'harbour.pdf', contentType: 'application/pdf', size: 2000 },
    })
  ).body.data.fileId;
  await app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}/harbour.pdf`, fileId } });
  await until(
    'harbour.pdf completed',
    async () => (await app.request('GET', `/message/pdf/${fileId}`, { token })).body.data?.embeddingsData?.status,
    (status) => status === 'completed',
  );
}, 180_000); // an ingestion, which a loaded machine can stretch past the default minute
afterEach(() => app.reranker.reset());
afterAll(() => app?.stop());

test("POST /search returns the reranker's order of the candidates", async () => {
  const res = await search();
  expect(res.status).toBe(200);
  expect(app.reranker.requests).toHaveLength(1);
  const { body } = app.reranker.requests[0]!;
  expect(body).toMatchObject({ model: 'rerank-v3.5', query: QUERY, top_n: 3 });
  expect(body.documents.length).toBeGreaterThanOrEqual(3);
  // The stand-in ranks by the share of the query's words: page 3 holds all four.
  expect(res.body.data.map((p: { page: number }) => p.page)[0]).toBe(3);
});

test.each([
  ['an error', () => app.reranker.failNext(1, 503)],
  ['a rate limit', () => app.reranker.failNext(1, 429)],
  ['no answer within RERANK_TIMEOUT_MS', () => app.reranker.hold()],
])('with %s from the reranker, POST /search answers in the retrieval order', async (_name, arrange) => {
  arrange();
  const res = await search();
  expect(res.status).toBe(200);
  expect(res.body.data).toHaveLength(3);
  const documents = sentDocuments();
  expect(res.body.data.map((p: { quote: string }) => positionIn(documents, p.quote))).toEqual([0, 1, 2]);
});

test("a file chat's reply is given the reranker's order, and a reranker that fails does not fail the reply", async () => {
  const chatId = (await app.request('POST', '/chat', { token, body: { name: 'harbour', type: 'file' } })).body.data.id;
  await app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}/harbour.pdf`, fileId, chatId } });
  const ranked = await app.request('POST', '/message/logged-in', { token, body: { chatId, prompt: QUERY } });
  expect(ranked.status).toBe(200);
  expect(ranked.body.data.sources[0].page).toBe(3);

  app.reranker.failNext(1, 500);
  const kept = await app.request('POST', '/message/logged-in', { token, body: { chatId, prompt: QUERY } });
  expect(kept.status).toBe(200);
  const documents = sentDocuments();
  expect(kept.body.data.sources.map((s: { quote: string }) => positionIn(documents, s.quote))).toEqual(
    kept.body.data.sources.map((_: unknown, i: number) => i),
  );
});
