import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { docxAround, makeCfb, zeroBombStream } from '#test/helpers/hostile-ooxml.ts';
import { makeXlsx } from '#test/helpers/ooxml-docs.ts';
import { settledIngestion } from '#test/helpers/settled-ingestion.ts';

// Hostile documents of the formats beyond PDF, through the gateway: each fails with its typed
// reason (or reads within bounds) in the bounded reader, nothing it references is ever fetched,
// and the service keeps answering other requests meanwhile (docs/DECISIONS.md "Documents, not only PDFs").

let app: TestApp;
let token: string;
/** Where hostile documents point: any request arriving here is a failure. */
let bait: Server;
let baitUrl: string;
let baitRequests = 0;

const WORD = (body: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`;

async function ingest(path: string, body: Uint8Array | string) {
  app.pdfs.serve(path, { body: typeof body === 'string' ? body : Buffer.from(body) });
  const upload = await app.request('POST', '/upload', {
    token,
    body: { fileName: path.slice(1), contentType: 'application/octet-stream', size: 5000 },
  });
  const fileId: string = upload.body.data.fileId;
  // Another request while the document is read: it is served as usual.
  const [res, me] = await Promise.all([
    app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}${path}`, fileId } }),
    app.request('GET', '/me', { token }),
  ]);
  expect(me.status).toBe(200);
  return settledIngestion(app, token, fileId, res);
}

const refusal = (res: Awaited<ReturnType<typeof ingest>>) => ({
  status: res.status,
  code: res.body.errors?.[0]?.code,
  message: res.body.errors?.[0]?.message as string,
});

beforeAll(async () => {
  bait = createServer((_req, res) => {
    baitRequests++;
    res.end('BAIT-TEXT');
  });
  await new Promise<void>((resolve) => bait.listen(0, '127.0.0.1', resolve));
  baitUrl = `http://127.0.0.1:${(bait.address() as AddressInfo).port}`;
  app = await startTestApp({ pdfs: true });
  ({ token } = await app.signIn('hostile-documents@example.com'));
});
afterAll(async () => {
  await app?.stop();
  await new Promise<void>((resolve) => bait.close(() => resolve()));
});
afterEach(() => expect(baitRequests).toBe(0));

test('a zip bomb (4 GiB of zeros in < 5 MB) fails TOO_COMPLEX from its directory, never inflated', async () => {
  const bomb = docxAround({ name: 'word/document.xml', data: zeroBombStream(64), size: 0xfffffffe });
  expect(bomb.length).toBeLessThan(5 * 1024 * 1024);
  expect(refusal(await ingest('/bomb.docx', bomb))).toEqual({
    status: 400,
    code: 'TOO_COMPLEX',
    message: expect.stringContaining('uncompressed'),
  });
});

test('billion laughs fails INVALID_DOCUMENT without expansion', async () => {
  const entities = Array.from({ length: 9 }, (_, k) => `<!ENTITY lol${k + 1} "${`&lol${k};`.repeat(10)}">`).join('');
  const xml = `<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY lol0 "lol">${entities}]>${WORD('<w:p><w:r><w:t>&lol9;</w:t></w:r></w:p>')}`;
  expect(refusal(await ingest('/laughs.docx', docxAround(xml)))).toMatchObject({
    status: 400,
    code: 'INVALID_DOCUMENT',
  });
});

test("external entities naming a local file and a loopback URL: refused, the file's text never appears, the URL never asked", async () => {
  const secret = join(mkdtempSync(join(tmpdir(), 'xxe-')), 'secret.txt');
  writeFileSync(secret, 'LOCAL-FILE-SECRET');
  const xml = `<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY file SYSTEM "file://${secret}"><!ENTITY remote SYSTEM "${baitUrl}/entity">]>${WORD('<w:p><w:r><w:t>&file; &remote;</w:t></w:r></w:p>')}`;
  const res = await ingest('/xxe.docx', docxAround(xml));
  expect(refusal(res)).toMatchObject({ status: 400, code: 'INVALID_DOCUMENT' });
  expect(JSON.stringify(res.body)).not.toContain('LOCAL-FILE-SECRET');
});

test('an HTML page whose images, styles, frames and scripts point at a loopback server is read; nothing is requested', async () => {
  const page = `<!doctype html><html><head><title>Bait</title><link rel="stylesheet" href="${baitUrl}/s.css">
    <script src="${baitUrl}/s.js"></script><style>body { background: url(${baitUrl}/bg.png) }</style>
    <meta http-equiv="refresh" content="0; url=${baitUrl}/go"></head><body><main><h1>Harbour</h1>
    <p>The harbour wall was rebuilt in granite after the storm.</p><img src="${baitUrl}/i.png" srcset="${baitUrl}/i2.png 2x">
    <iframe src="${baitUrl}/frame"></iframe><object data="${baitUrl}/o"></object></main></body></html>`;
  const res = await ingest('/bait.html', page);
  expect(res.body.data.embeddingsData).toMatchObject({ status: 'completed', format: 'html' });
});

test('100,000 nested elements fail TOO_COMPLEX at the depth bound', async () => {
  const deep = `<!doctype html><html><body>${'<div>'.repeat(100_000)}deep${'</div>'.repeat(100_000)}</body></html>`;
  expect(refusal(await ingest('/deep.html', deep))).toEqual({
    status: 400,
    code: 'TOO_COMPLEX',
    message: expect.stringContaining('deep'),
  });
});

test('a sheet declaring a million cells but holding a few reads within bounds', async () => {
  const rawSheetData =
    '<row r="1"><c r="A1" t="inlineStr"><is><t>Tide</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>Spring tides rise highest at the full moon.</t></is></c></row>';
  const book = makeXlsx([{ name: 'Tides', rawSheetData, dimension: 'A1:XFD1048576' }]);
  const res = await ingest('/declared.xlsx', book);
  expect(res.body.data.embeddingsData).toMatchObject({ status: 'completed', format: 'xlsx', parts: 1 });
});

test.each([
  ['a legacy Word file', ['WordDocument'], /\.docx/],
  ['a legacy Excel file', ['Workbook'], /\.xlsx/],
  ['an encrypted package', ['EncryptionInfo', 'EncryptedPackage'], /password/],
])('%s is refused with 400 UNSUPPORTED_TYPE saying what to do', async (_what, streams, advice) => {
  const res = await ingest(`/ole-${streams[0]}.bin`, makeCfb(streams));
  expect(refusal(res)).toEqual({ status: 400, code: 'UNSUPPORTED_TYPE', message: expect.stringMatching(advice) });
});
