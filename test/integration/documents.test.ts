import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '#infra/build.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { makeDocx, makePptx, makeXlsx } from '#test/helpers/ooxml-docs.ts';
import { settledIngestion } from '#test/helpers/settled-ingestion.ts';

// Documents beyond PDF through the gateway: each format is ingested from its bytes (whatever its
// name and declared type), its status says its format and parts, and a search finds a known
// sentence with its place (section path, slide, sheet and rows), verified: the part's text at
// [charStart, charEnd) is the quote. What must not be searchable (a page's navigation) is not.

let app: TestApp;
let token: string;

const fixture = (name: string) => readFileSync(join(projectRoot, 'test/fixtures/documents', name));

/** The content types of Office Open XML files. */
const OOXML_TYPES = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** Uploads a file record, ingests the URL's bytes into it; the ingestion's answer and the file id. */
async function ingest(path: string, fileName: string, contentType = 'application/pdf') {
  const upload = await app.request('POST', '/upload', { token, body: { fileName, contentType, size: 5000 } });
  expect(upload.status).toBe(201);
  const fileId: string = upload.body.data.fileId;
  const res = await app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}${path}`, fileId } });
  return { res: await settledIngestion(app, token, fileId, res), fileId };
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
  app = await startTestApp({ pdfs: true, env: { CHUNK_TOKENS: '120', CHUNK_OVERLAP_TOKENS: '0' } });
  app.pdfs.serve('/guide.md', { body: MARKDOWN, contentType: 'text/markdown' });
  // A Markdown file under a PDF's name and type: read as what its bytes are.
  app.pdfs.serve('/guide-named.pdf', { body: MARKDOWN, contentType: 'application/pdf' });
  app.pdfs.serve('/rustdoc.html', { body: fixture('rustdoc-what-is-rustdoc.html'), contentType: 'text/html' });
  app.pdfs.serve('/deck.pptx', {
    body: Buffer.from(
      makePptx(
        [1, 2, 3, 4, 5].map((n) => ({
          title: `Quarter ${n} review`,
          body: [`Revenue figures for period ${n} were presented to the board.`],
          notes:
            n === 4
              ? ['Remind the board that the lighthouse restoration finished two weeks early.']
              : [`Speaker notes for slide ${n}.`],
        })),
      ),
    ),
  });
  app.pdfs.serve('/stations.xlsx', {
    body: Buffer.from(
      makeXlsx([
        {
          name: 'Stations',
          rows: [
            ['Station', 'Rainfall', 'Wind'],
            ...Array.from({ length: 150 }, (_, k) => [`Station ${k + 1}`, 100 + k, k % 7]),
            ['Gull Point', 777, 9],
          ],
        },
        { name: 'Secret', state: 'hidden', rows: [['Password'], ['the vault code is marmalade']] },
      ]),
    ),
  });
  app.pdfs.serve('/handbook.docx', {
    body: Buffer.from(
      makeDocx([
        { heading: 'Staff handbook', level: 1 },
        { paragraph: 'Welcome to the company.' },
        { heading: 'Leave', level: 2 },
        { heading: 'Parental leave', level: 3 },
        { paragraph: 'Parents may take twenty-six weeks of paid parental leave.' },
      ]),
    ),
  });
  for (const name of ['officer-example.docx', 'officer-example.pptx', 'readxl-deaths.xlsx'])
    app.pdfs.serve(`/${name}`, { body: fixture(name) });
  app.pdfs.serve('/photo.pdf', { body: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]) });
  ({ token } = await app.signIn('documents@example.com'));
});
afterAll(() => app?.stop());

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

test("PowerPoint: a sentence of slide 4's speaker notes is found at slide 4, verified in its part", async () => {
  const { res, fileId } = await ingest('/deck.pptx', 'deck.pptx', OOXML_TYPES.pptx);
  expect(res.body.data.embeddingsData).toMatchObject({ status: 'completed', format: 'pptx', parts: 5 });
  const [best] = await search('When did the lighthouse restoration finish?', fileId);
  expect(best!.quote).toContain('lighthouse restoration finished two weeks early');
  expect(best!).toMatchObject({ part: 4, location: { type: 'slide', slide: 4, title: 'Quarter 4 review' } });
  await expectQuoteInPart(fileId, best!);
});

test("Excel: a row is found with its sheet and A1 range, its chunk starts with the header; a hidden sheet's text is not searchable", async () => {
  const { res, fileId } = await ingest('/stations.xlsx', 'stations.xlsx', OOXML_TYPES.xlsx);
  expect(res.body.data.embeddingsData).toMatchObject({ status: 'completed', format: 'xlsx' });
  const [best] = await search('What is the rainfall at Gull Point?', fileId);
  expect(best!.quote).toContain('| Gull Point | 777 | 9 |');
  expect(best!.location).toEqual({ type: 'sheet', sheet: 'Stations', range: 'A152:C152' });
  await expectQuoteInPart(fileId, best!);
  const part = await app.request('GET', `/files/${fileId}/parts/${best!.part}`, { token });
  expect(part.body.data.text.startsWith('| Station | Rainfall | Wind |')).toBe(true);
  const hidden = await search('vault code marmalade', fileId);
  expect(hidden.map((p) => p.quote).join(' ')).not.toContain('marmalade');
});

test('Word: a sentence is found under its heading path', async () => {
  const { res, fileId } = await ingest('/handbook.docx', 'handbook.docx', OOXML_TYPES.docx);
  expect(res.body.data.embeddingsData).toMatchObject({ status: 'completed', format: 'docx' });
  const [best] = await search('How long is parental leave?', fileId);
  expect(best!.quote).toContain('twenty-six weeks');
  expect(best!.location).toEqual({ type: 'section', path: ['Staff handbook', 'Leave', 'Parental leave'] });
  await expectQuoteInPart(fileId, best!);
});

test.each([
  ['officer-example.docx', 'docx', 'Petals', 'section'],
  ['officer-example.pptx', 'pptx', '| B | 9.0 | Salut |', 'slide'],
  ['readxl-deaths.xlsx', 'xlsx', 'David Bowie', 'sheet'],
])('the real file %s is read as %s and found with its place', async (name, format, known, type) => {
  const { res, fileId } = await ingest(`/${name}`, name, 'application/octet-stream');
  expect(res.body.data.embeddingsData).toMatchObject({ status: 'completed', format });
  const passages = await search(`${known}`, fileId);
  const hit = passages.find((p) => p.quote.includes(known));
  expect(hit).toBeDefined();
  expect(hit!.location).toMatchObject({ type });
  await expectQuoteInPart(fileId, hit!);
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
  expect(JSON.stringify(page.body)).toContain('/files/{fileId}/parts/{part}');
  expect((await app.request('GET', `/files/${fileId}/parts/99`, { token })).status).toBe(404);
  const stranger = await app.signIn('documents-stranger@example.com');
  expect((await app.request('GET', `/files/${fileId}/parts/1`, { token: stranger.token })).status).toBe(404);
});
