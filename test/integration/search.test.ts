import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { makePdfFromLines, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { until } from '#test/helpers/until.ts';

// POST /search through the gateway: passages across the caller's completed files, over a
// collection, named files, both, or all of them; k's bounds; files not completed are not
// searched; strangers' collections and files are 404; the query's embedding is charged to the
// daily token budget and counted in the usage.

let app: TestApp;
let alice: { token: string; id: string };
let files: Record<'trees' | 'gardens' | 'tides', string>;
let collectionId: string;

const TOPICS = {
  trees: [
    ['Trace trees compile each hot loop of the interpreter into native machine code.'],
    ['A trace tree grows a new branch whenever a side exit becomes hot.'],
  ],
  gardens: [['Tomato seedlings need warm soil and plenty of morning sunlight in spring.']],
  tides: [['Ocean tides follow the moon, rising twice a day along the northern coast.']],
};

const search = (body: unknown, token = alice.token) => app.request('POST', '/search', { token, body });
const fileIdsOf = (res: { body: { data: { fileId: string }[] } }) => [...new Set(res.body.data.map((p) => p.fileId))];

async function upload(token: string, fileName: string): Promise<string> {
  const res = await app.request('POST', '/upload', {
    token,
    body: { fileName, contentType: 'application/pdf', size: 2000 },
  });
  return res.body.data.fileId;
}

async function ingested(token: string, topic: keyof typeof TOPICS | 'long'): Promise<string> {
  const fileId = await upload(token, `${topic}.pdf`);
  await app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}/${topic}.pdf`, fileId } });
  await until(
    `${topic}.pdf completed`,
    async () => (await app.request('GET', `/message/pdf/${fileId}`, { token })).body.data?.embeddingsData?.status,
    (status) => status === 'completed',
  );
  return fileId;
}

beforeAll(async () => {
  // A daily budget of 3,000 tokens, far above what the other tests spend (what a search holds
  // and settles shows in GET /me); small chunks, so one file holds more passages than the default k.
  app = await startTestApp({
    pdfs: { '/long.pdf': { body: Buffer.from(await makeTextPdf(4, 12)) } },
    env: { DAILY_TOKEN_BUDGET: '3000', CHUNK_TOKENS: '60', CHUNK_OVERLAP_TOKENS: '0' },
  });
  for (const [name, pages] of Object.entries(TOPICS))
    app.pdfs.serve(`/${name}.pdf`, { body: Buffer.from(await makePdfFromLines(pages)) });
  const signedIn = await app.signIn('searcher@example.com');
  alice = { token: signedIn.token, id: signedIn.user.id };
  files = {
    trees: await ingested(alice.token, 'trees'),
    gardens: await ingested(alice.token, 'gardens'),
    tides: await ingested(alice.token, 'tides'),
  };
  collectionId = (await app.request('POST', '/collections', { token: alice.token, body: { name: 'nature' } })).body.data
    .id;
  for (const f of [files.gardens, files.tides])
    await app.request('PUT', `/collections/${collectionId}/files/${f}`, { token: alice.token });
});
afterAll(() => app?.stop());

test('with no filter every completed file of the caller is searched; passages carry file, page, part and location, quote with its place, and score', async () => {
  const res = await search({ query: 'trace tree side exit branch' });
  expect(res.status).toBe(200);
  expect(res.body.data[0]).toEqual({
    fileId: files.trees,
    fileName: 'trees.pdf',
    page: 2,
    part: 2,
    location: { type: 'page', page: 2 },
    quote: expect.stringContaining('side exit'),
    charStart: expect.any(Number),
    charEnd: expect.any(Number),
    verified: true,
    score: expect.any(Number),
  });
  expect(fileIdsOf(await search({ query: 'ocean tides moon' }))).toContain(files.tides);
  expect(fileIdsOf(await search({ query: 'tomato seedlings soil', k: 50 })).sort()).toEqual(
    Object.values(files).sort(),
  );
});

test("collectionId keeps the collection's files; fileIds the named ones; both: the named ones in the collection", async () => {
  const inCollection = await search({ query: 'trace trees compile hot loops', collectionId, k: 50 });
  expect(inCollection.status).toBe(200);
  expect(fileIdsOf(inCollection).sort()).toEqual([files.gardens, files.tides].sort());

  const named = await search({ query: 'ocean tides', fileIds: [files.trees], k: 50 });
  expect(fileIdsOf(named)).toEqual([files.trees]);

  const both = await search({ query: 'tides', collectionId, fileIds: [files.trees, files.tides], k: 50 });
  expect(fileIdsOf(both)).toEqual([files.tides]);
});

test('k: at most k passages, 8 by default; 0, 51 and non-integers are 400', async () => {
  const { token } = await app.signIn('many-passages@example.com');
  await ingested(token, 'long');
  const many = await search({ query: 'folio', k: 50 }, token);
  expect(many.body.data.length).toBeGreaterThan(8);
  expect((await search({ query: 'folio' }, token)).body.data).toHaveLength(8);
  expect((await search({ query: 'folio', k: 1 }, token)).body.data).toHaveLength(1);
  expect((await search({ query: 'folio', k: 50 }, token)).body.data.length).toBeLessThanOrEqual(50);
  for (const k of [0, 51, 2.5, -1, '3']) {
    const res = await search({ query: 'the', k });
    expect([k, res.status, res.body.success]).toEqual([k, 400, false]);
  }
});

test('a file that is not completed is not searched', async () => {
  const uploadedOnly = await upload(alice.token, 'pending.pdf');
  const res = await search({ query: 'trace trees', fileIds: [uploadedOnly] });
  expect([res.status, res.body.data]).toEqual([200, []]);
  const all = await search({ query: 'trace trees', k: 50 });
  expect(fileIdsOf(all)).not.toContain(uploadedOnly);
});

test('bad bodies are 400', async () => {
  for (const body of [
    {},
    { query: '' },
    { query: '   ' },
    { query: 'x'.repeat(2001) },
    { query: 7 },
    { query: 'trees', fileIds: [] },
    { query: 'trees', fileIds: ['not-an-id'] },
    { query: 'trees', collectionId: 'nope' },
    { query: 'trees', extra: true },
  ]) {
    const res = await search(body);
    expect([JSON.stringify(body).slice(0, 60), res.status, res.body.success]).toEqual([
      JSON.stringify(body).slice(0, 60),
      400,
      false,
    ]);
  }
  expect((await app.request('POST', '/search', { body: { query: 'trees' } })).status).toBe(401);
});

test("a stranger's collection or file is 404, and a stranger's search finds none of the caller's passages", async () => {
  const { token } = await app.signIn('search-stranger@example.com');
  expect((await search({ query: 'tides', collectionId }, token)).status).toBe(404);
  expect((await search({ query: 'tides', fileIds: [files.tides] }, token)).status).toBe(404);
  expect((await search({ query: 'tides', collectionId: 'k0000000000000000000000a' }, token)).status).toBe(404);
  const own = await search({ query: 'ocean tides moon', k: 50 }, token);
  expect([own.status, own.body.data]).toEqual([200, []]);
});

test("the query's embedding is charged to the daily budget and counted by model, as a prompt's", async () => {
  const usage = async () => (await app.request('GET', '/me', { token: alice.token })).body.data.usage;
  const before = await usage();
  const query = 'morning sunlight for the tomato seedlings in spring';
  expect((await search({ query })).status).toBe(200);
  const after = await usage();
  const tokens = Math.ceil(query.length / 3); // the offline provider's estimate of its embedding
  expect(after.budget.usedToday - before.budget.usedToday).toBe(tokens);
  const model = Object.keys(after.tokens.today).find((m) => m.includes('lexical') || m.includes('offline'))!;
  expect((after.tokens.today[model] ?? 0) - (before.tokens.today[model] ?? 0)).toBe(tokens);
});

test('a spent daily budget refuses a search with 429, and the refused query is not charged', async () => {
  const { token } = await app.signIn('tight-budget@example.com');
  const query = 'trace trees and side exits '.repeat(74).slice(0, 2000).trim();
  const tokens = Math.ceil(query.length / 3); // the offline provider's count (666), and the estimate held
  for (let i = 0; i < 4; i++) expect((await search({ query }, token)).status).toBe(200); // 2,664 of 3,000
  const res = await search({ query }, token);
  expect([res.status, res.body.success]).toEqual([429, false]);
  expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
  const usage = (await app.request('GET', '/me', { token })).body.data.usage;
  expect(usage.budget.usedToday).toBe(4 * tokens);
});
