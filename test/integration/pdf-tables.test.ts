import { useTestApp } from '#test/helpers/app.ts';
import { fileChatWith } from '#test/helpers/files.ts';
import {
  knownSentence,
  makeTablePdf,
  TABLE_HEADER,
  tableMarkdownRow,
  tableRow,
  type TableFixture,
} from '#test/helpers/make-pdf.ts';
import { ChunkRepository, type ChunkItem } from '#shared/files/chunk-repository.ts';

// Tables and sections through the gateway: a PDF with numbered headings and a table is ingested;
// a question about a cell is answered from the row's chunk, whose quote is the row and whose
// passage names the columns; sources carry the heading path; a table longer than a chunk repeats
// its header row at the start of every chunk that holds its rows. Small chunks (200 tokens), so
// that a table of a few dozen rows spans several.

let short: TableFixture;
let long: TableFixture;

const header = tableMarkdownRow(TABLE_HEADER);

/** A new file chat with the PDF at `path` ingested into it; its chat and file ids. */
const chatWith = (path: string, name: string) => fileChatWith(app, app.token, path, name);

const app = useTestApp(async () => {
  [short, long] = await Promise.all([makeTablePdf(12), makeTablePdf(90)]);
  return {
    model: 'openai',
    pdfs: {
      '/stations.pdf': { body: Buffer.from(short.bytes) },
      '/stations-long.pdf': { body: Buffer.from(long.bytes) },
    },
    env: { CHUNK_TOKENS: '200', CHUNK_OVERLAP_TOKENS: '40' },
    user: 'tables@example.com',
  };
});
beforeEach(() => app.ai.reset());

test('a question about a cell cites its row: the quote is the row, the passage starts with the header, the source names its section', async () => {
  const { chatId } = await chatWith('/stations.pdf', 'stations.pdf');
  const row = tableRow(5);
  app.ai.setReply(`The rainfall there is ${row[2]} [1][2][3].`);
  const res = await app.request('POST', '/message/logged-in', {
    token: app.token,
    body: { chatId, prompt: `What is the rainfall at the station ${row[0]}?` },
  });
  expect(res.status).toBe(200);
  const { sources } = res.body.data;
  // Among the best three (the dense ranking may put the table's introduction first).
  const at = sources.findIndex((s: { quote: string }) => s.quote === tableMarkdownRow(row));
  expect(at).toBeGreaterThanOrEqual(0);
  expect(at).toBeLessThan(3);
  expect(sources[at]).toMatchObject({
    page: short.rowPages[5],
    quote: tableMarkdownRow(row),
    section: short.tableSection,
    cited: true,
  });
  // Every source says where it sits.
  for (const source of sources) expect(typeof source.section).toBe('string');

  // The model was given the row under the table's header (its column names).
  const passage = app.ai
    .chatRequests()[0]!
    .messages.at(-1)!
    .content.split(`<passage n="${at + 1}"`)[1]!
    .split('</passage>')[0]!;
  const lines = passage.split('\n');
  const headerAt = lines.indexOf(header);
  expect(headerAt).toBeGreaterThan(-1);
  expect(lines.indexOf(tableMarkdownRow(row))).toBeGreaterThan(headerAt);

  // The stored reply keeps the section with its sources.
  const stored = (await app.request('GET', `/chat/${chatId}/messages`, { token: app.token })).body.data.at(-1);
  expect(stored.sources[at].section).toBe(short.tableSection);
});

test('prose after the table is cited under its own heading', async () => {
  const { chatId } = await chatWith('/stations.pdf', 'stations-again.pdf');
  const sentence = knownSentence(short.rowPages.at(-1)!, 21);
  app.ai.setReply('See [1].');
  const res = await app.request('POST', '/message/logged-in', { token: app.token, body: { chatId, prompt: sentence } });
  expect(res.body.data.sources[0]).toMatchObject({ quote: sentence, section: short.closingSection });
});

test('a table longer than a chunk repeats its header row at the start of every chunk holding its rows', async () => {
  const { chatId, fileId } = await chatWith('/stations-long.pdf', 'stations-long.pdf');
  const { db } = app.clients();
  const chunks: ChunkItem[] = [];
  for await (const page of new ChunkRepository(db, app.config.TABLE_NAME).list(fileId)) chunks.push(...page);
  const holding = chunks.filter((c) => c.text.split('\n').some((l) => l.startsWith('| ') && l !== header));
  // 90 rows of about 15 tokens in chunks of 200: more chunks than the table's pages (each drawn with its header).
  expect(holding.length).toBeGreaterThan(long.rowPages.at(-1)! + 2);
  for (const chunk of holding) expect(chunk.text.split('\n').find((l) => l.startsWith('| '))).toBe(header);

  // A row deep in the table is cited with its page, and given to the model under the header.
  const row = tableRow(70);
  app.ai.setReply(`It lies at ${row[1]} [1].`);
  const res = await app.request('POST', '/message/logged-in', {
    token: app.token,
    body: { chatId, prompt: `How high is the station ${row[0]}?` },
  });
  const cited = res.body.data.sources.find((s: { quote: string }) => s.quote === tableMarkdownRow(row));
  expect(cited).toMatchObject({ page: long.rowPages[70], section: long.tableSection });
  const chunk = chunks.find((c) => c.n === cited.chunk)!;
  expect(chunk.text.startsWith(`${header}\n`)).toBe(true);
});
