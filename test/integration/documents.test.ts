import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '#infra/build.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { startPdfServer, type PdfServer } from '#test/helpers/pdf-server.ts';

// Documents beyond PDF through the gateway: each format is ingested from its bytes (whatever its
// name and declared type), its status says its format and parts, and a search finds a known
// sentence with its place (section path, slide, sheet and rows), verified: the part's text at
// [charStart, charEnd) is the quote. What must not be searchable (a page's navigation) is not.

let app: TestApp;
let docs: PdfServer;
let token: string;

const fixture = (name: string) => readFileSync(join(projectRoot, 'test/fixtures/documents', name));

/** Uploads a file record, ingests the URL's bytes into it; the ingestion's answer and the file id. */
async function ingest(path: string, fileName: string, contentType = 'application/pdf') {
  const upload = await app.request('POST', '/upload', { token, body: { fileName, contentType, size: 5000 } });
  expect(upload.status).toBe(201);
  const fileId: string = upload.body.data.fileId;
  const res = await app.request('POST', '/message/pdf', { token, body: { url: `${docs.url}${path}`, fileId } });
  return { res, fileId };
}

async function search(query: string, fileId: string) {
  const res = await app.request('POST', '/search', { token, body: { query, fileIds: [fileId], k: 3 } });
  expect(res.status).toBe(200);
  return res.body.data as {
    quote: string;
    part: number;
    location: unknown;
    charStart?: number;
    charEnd?: number;
    verified: boolean;
  }[];
}

/** The passage's quote is its part's text at [charStart, charEnd). */
async function expectQuoteInPart(fileId: string, passage: Awaited<ReturnType<typeof search>>[number]) {
  expect(passage.verified).toBe(true);
  const part = await app.request('GET', `/files/${fileId}/parts/${passage.part}`, { token });
  expect(part.status).toBe(200);
  expect(part.body.data.location).toEqual(
    expect.objectContaining({ type: (passage.location as { type: string }).type }),
  );
  expect(part.body.data.text.slice(passage.charStart, passage.charEnd)).toBe(passage.quote);
}

const MARKDOWN = [
  '# Field guide',
  'Birds of the northern coast, as seen from the harbour wall.',
  '## Waders',
  'Waders feed on the mudflats when the tide goes out.',
  '### Oystercatchers',
  'The oystercatcher opens mussels with a chisel-shaped orange bill.',
  '## Counts',
  '| Species | Count |',
  '| --- | --- |',
  '| Curlew | 14 |',
  '| Dunlin | 230 |',
].join('\n\n');

beforeAll(async () => {
  docs = await startPdfServer();
  docs.serve('/guide.md', { body: MARKDOWN, contentType: 'text/markdown' });
  // A Markdown file under a PDF's name and type: read as what its bytes are.
  docs.serve('/guide-named.pdf', { body: MARKDOWN, contentType: 'application/pdf' });
  docs.serve('/rustdoc.html', { body: fixture('rustdoc-what-is-rustdoc.html'), contentType: 'text/html' });
  docs.serve('/photo.pdf', { body: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]) });
  app = await startTestApp({ env: { CHUNK_TOKENS: '120', CHUNK_OVERLAP_TOKENS: '0' } });
  ({ token } = await app.signIn('documents@example.com'));
});
afterAll(async () => {
  await app?.stop();
  await docs?.close();
});

test('Markdown: its status says markdown and its parts; a sentence is found under its heading path, verified in its part', async () => {
  const { res, fileId } = await ingest('/guide.md', 'guide.md', 'text/markdown');
  expect(res.status).toBe(200);
  expect(res.body.data.embeddingsData).toMatchObject({ status: 'completed', format: 'markdown' });
  expect(res.body.data.embeddingsData.parts).toBeGreaterThanOrEqual(2);
  const [best] = await search('How does the oystercatcher open mussels?', fileId);
  expect(best!.quote).toContain('chisel-shaped orange bill');
  expect(best!.location).toEqual({ type: 'section', path: ['Field guide', 'Waders', 'Oystercatchers'] });
  await expectQuoteInPart(fileId, best!);
});

test("a table's row is found with its header in the chunk", async () => {
  const { fileId } = await ingest('/guide.md', 'counts.md', 'text/markdown');
  const [best] = await search('How many dunlin were counted?', fileId);
  expect(best!.quote).toContain('| Dunlin | 230 |');
  expect(best!.location).toEqual({ type: 'section', path: ['Field guide', 'Counts'] });
  await expectQuoteInPart(fileId, best!);
});

test('the type comes from the bytes: Markdown named .pdf is read as Markdown; a PNG named .pdf is 400 UNSUPPORTED_TYPE saying what it is', async () => {
  const named = await ingest('/guide-named.pdf', 'guide.pdf');
  expect(named.res.body.data.embeddingsData).toMatchObject({ status: 'completed', format: 'markdown' });
  const photo = await ingest('/photo.pdf', 'photo.pdf');
  expect(photo.res.status).toBe(400);
  expect(photo.res.body.errors[0]).toMatchObject({ code: 'UNSUPPORTED_TYPE' });
  expect(photo.res.body.errors[0].message).toMatch(/a PNG image.*PDF, Word \(\.docx\)/);
});

test("a real HTML page (rustdoc's book) reads as its main content: the navigation is not searchable", async () => {
  const { res, fileId } = await ingest('/rustdoc.html', 'rustdoc.html', 'text/html');
  expect(res.body.data.embeddingsData).toMatchObject({ status: 'completed', format: 'html' });
  const parts: string[] = [];
  for (let p = 1; p <= res.body.data.embeddingsData.parts; p++)
    parts.push((await app.request('GET', `/files/${fileId}/parts/${p}`, { token })).body.data.text);
  const text = parts.join('\n');
  expect(text).toContain('rustdoc');
  // The book's sidebar lists every chapter; the page's own text names few of them.
  expect(text).not.toMatch(/Keyboard shortcuts/i);
  const [best] = await search('What is rustdoc?', fileId);
  expect(best!.location).toMatchObject({ type: 'section' });
  await expectQuoteInPart(fileId, best!);
});

test("the page route answers 404 for a document that is not a PDF; a part past the file's is 404", async () => {
  const { fileId } = await ingest('/guide.md', 'pages.md', 'text/markdown');
  const page = await app.request('GET', `/message/pdf/${fileId}/pages/1`, { token });
  expect(page.status).toBe(404);
  expect(page.body.errors[0].message).toMatch(/parts/);
  expect((await app.request('GET', `/files/${fileId}/parts/99`, { token })).status).toBe(404);
  const stranger = await app.signIn('documents-stranger@example.com');
  expect((await app.request('GET', `/files/${fileId}/parts/1`, { token: stranger.token })).status).toBe(404);
});
