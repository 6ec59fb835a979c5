import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'fflate';
import { detectOoxml, docxReader, pptxReader, xlsxReader } from '#shared/readers/ooxml/index.ts';
import { OoxmlPackage } from '#shared/readers/ooxml/package.ts';
import { DEFAULT_READER_LIMITS, type DocumentReader, ReadRefused, type RefusalReason } from '#shared/readers/reader.ts';
import {
  DOCX_CONTENT_TYPES,
  DOCX_PACKAGE_RELS,
  deflatedEntry,
  docxAround,
  rawZip,
  zeroBombStream,
} from '#test/helpers/hostile-ooxml.ts';
import { makeDocx, makeXlsx, zipParts } from '#test/helpers/ooxml-docs.ts';

const limits = DEFAULT_READER_LIMITS;
const MB = 1024 * 1024;

/** The reason a read is refused with, and how much the heap grew meanwhile. */
async function refusedWith(reader: DocumentReader, bytes: Uint8Array, readerLimits = limits) {
  const heapBefore = process.memoryUsage().heapUsed;
  const error = await reader.read(bytes, readerLimits).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
  expect(error).toBeInstanceOf(ReadRefused);
  return {
    reason: (error as ReadRefused).reason as RefusalReason,
    message: (error as ReadRefused).message,
    heapGrowth,
  };
}

const document = (body: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`;

describe('zip bombs are refused before anything is inflated', () => {
  // One genuine 4 GiB stream of zeros (~4 MB on disk), built once.
  let bomb: Uint8Array;
  beforeAll(() => {
    bomb = zeroBombStream(64);
    expect(bomb.length).toBeLessThan(5 * MB);
  });

  test('a 4 GiB stream declaring its true size fails TOO_COMPLEX from the central directory alone', async () => {
    const zip = docxAround({ name: 'word/document.xml', data: bomb, size: 0xfffffffe });
    expect(zip.length).toBeLessThan(5 * MB);
    expect(() => detectOoxml(zip)).toThrow(ReadRefused);
    const { reason, message, heapGrowth } = await refusedWith(docxReader, zip);
    expect(reason).toBe('TOO_COMPLEX');
    expect(message).toContain('bytes uncompressed');
    expect(heapGrowth).toBeLessThan(100 * MB);
  });

  test('the same stream declaring a small size is stopped as soon as it inflates past it', async () => {
    const zip = docxAround({ name: 'word/document.xml', data: bomb, size: 2000 });
    const { reason, message, heapGrowth } = await refusedWith(docxReader, zip);
    expect(reason).toBe('TOO_COMPLEX');
    expect(message).toContain('inflates past the size it declares');
    expect(heapGrowth).toBeLessThan(100 * MB);
  });

  test('entries of zeros with crafted sizes (8 GB declared in a few KB) fail TOO_COMPLEX', async () => {
    const zeros = deflateSync(new Uint8Array(64 * 1024));
    const zip = rawZip([
      deflatedEntry('[Content_Types].xml', DOCX_CONTENT_TYPES),
      { name: 'word/document.xml', data: zeros, size: 0xf0000000 },
      { name: 'word/media/a.bin', data: zeros, size: 0xf0000000 },
    ]);
    expect((await refusedWith(docxReader, zip)).reason).toBe('TOO_COMPLEX');
  });

  test('a zip64 entry declaring 5 GB fails TOO_COMPLEX, and the same entry declaring its true size reads', async () => {
    const text = document('<w:p><w:r><w:t>Zip64 sizes</w:t></w:r></w:p>');
    const data = deflateSync(new TextEncoder().encode(text));
    const huge = docxAround({ name: 'word/document.xml', data, size: 5 * 1024 ** 3, zip64: true });
    expect((await refusedWith(docxReader, huge)).reason).toBe('TOO_COMPLEX');
    const honest = docxAround({ name: 'word/document.xml', data, size: text.length, zip64: true });
    expect((await docxReader.read(honest, limits))[0]!.text).toBe('Zip64 sizes');
  });

  test('one entry declaring a ratio past the limit fails TOO_COMPLEX though the total is allowed', async () => {
    const zeros = deflateSync(new Uint8Array(4 * MB)); // ~4 KB: a ratio of about 1000
    const zip = docxAround({ name: 'word/document.xml', data: zeros, size: 4 * MB });
    const { reason, message } = await refusedWith(docxReader, zip);
    expect([reason, message]).toEqual(['TOO_COMPLEX', expect.stringContaining('compression ratio over 200')]);
  });

  test('a package with more entries than allowed fails TOO_COMPLEX', async () => {
    const parts: Record<string, string> = {};
    for (let k = 0; k < 30; k++) parts[`word/media/extra${k}.xml`] = '<x/>';
    const zip = makeDocx([{ paragraph: 'x' }], { extraParts: parts });
    const { reason, message } = await refusedWith(docxReader, zip, { ...limits, maxEntries: 20 });
    expect([reason, message]).toEqual(['TOO_COMPLEX', expect.stringContaining('entries (at most 20)')]);
  });

  test('a macro part is never inflated, even when it is itself a bomb', async () => {
    const zip = rawZip([
      deflatedEntry(
        '[Content_Types].xml',
        DOCX_CONTENT_TYPES.replace(
          'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml',
          'application/vnd.ms-word.document.macroEnabled.main+xml',
        ),
      ),
      deflatedEntry('_rels/.rels', DOCX_PACKAGE_RELS),
      deflatedEntry('word/document.xml', document('<w:p><w:r><w:t>Safe text</w:t></w:r></w:p>')),
      { name: 'word/vbaProject.bin', data: bomb, size: 100 },
    ]);
    const pkg = OoxmlPackage.open(zip, limits);
    expect(pkg.has('word/vbaProject.bin')).toBe(false);
    expect((await docxReader.read(zip, limits))[0]!.text).toBe('Safe text');
  });
});

describe('XML is read without DTDs or entities', () => {
  let server: Server;
  let requests = 0;
  let url = '';
  beforeAll(async () => {
    server = createServer((_request, response) => {
      requests += 1;
      response.end('LOOPBACK-ENTITY-TEXT');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/entity`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('billion laughs fails INVALID_DOCUMENT without expansion', async () => {
    const entities = Array.from({ length: 9 }, (_, k) => `<!ENTITY lol${k + 1} "${`&lol${k};`.repeat(10)}">`).join('');
    const xml = `<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY lol0 "lol">${entities}]>${document('<w:p><w:r><w:t>&lol9;</w:t></w:r></w:p>')}`;
    const { reason, message, heapGrowth } = await refusedWith(docxReader, docxAround(xml));
    expect([reason, message]).toEqual(['INVALID_DOCUMENT', expect.stringContaining('declares a document type')]);
    expect(heapGrowth).toBeLessThan(100 * MB);
  });

  test('external entities naming a local file and a loopback URL are refused; nothing is read or requested', async () => {
    const secretFile = join(mkdtempSync(join(tmpdir(), 'ooxml-')), 'secret.txt');
    writeFileSync(secretFile, 'LOCAL-FILE-SECRET');
    const xml = `<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY file SYSTEM "file://${secretFile}"><!ENTITY remote SYSTEM "${url}">]>${document('<w:p><w:r><w:t>&file; &remote;</w:t></w:r></w:p>')}`;
    const { reason, message } = await refusedWith(docxReader, docxAround(xml));
    expect(reason).toBe('INVALID_DOCUMENT');
    expect(message).not.toContain('LOCAL-FILE-SECRET');
    // A request, had one been made, would have arrived before the read settled.
    expect(requests).toBe(0);
  });

  test('a DOCTYPE in a sheet or in [Content_Types].xml is refused the same way', async () => {
    const rawXml = `<?xml version="1.0"?><!DOCTYPE worksheet [<!ENTITY x SYSTEM "${url}">]><worksheet><sheetData><row><c t="inlineStr"><is><t>&x;</t></is></c></row></sheetData></worksheet>`;
    const book = makeXlsx([{ name: 's', rawXml }]);
    expect((await refusedWith(xlsxReader, book)).reason).toBe('INVALID_DOCUMENT');
    const typed = zipParts({
      '[Content_Types].xml': `<?xml version="1.0"?><!DOCTYPE Types SYSTEM "${url}"><Types/>`,
    });
    expect(() => detectOoxml(typed)).toThrow(ReadRefused);
    expect((await refusedWith(pptxReader, typed)).reason).toBe('INVALID_DOCUMENT');
    expect(requests).toBe(0);
  });

  test('100,000 nested elements fail TOO_COMPLEX at the depth bound', async () => {
    // Stored, not deflated: deflated, it would already fail the compression ratio bound.
    const deep = new TextEncoder().encode(document(`${'<w:sdt>'.repeat(100_000)}${'</w:sdt>'.repeat(100_000)}`));
    const zip = docxAround({ name: 'word/document.xml', data: deep, method: 0, size: deep.length });
    const { reason, message } = await refusedWith(docxReader, zip);
    expect([reason, message]).toEqual(['TOO_COMPLEX', expect.stringContaining('more than 512 deep')]);
  });

  test('malformed XML fails INVALID_DOCUMENT', async () => {
    const { reason } = await refusedWith(docxReader, docxAround(document('<w:p><w:r></w:p>')));
    expect(reason).toBe('INVALID_DOCUMENT');
  });
});

describe('sheets and damaged packages', () => {
  test('a sheet holding more cells than allowed fails TOO_COMPLEX', async () => {
    const row = (r: number) =>
      `<row r="${r}">${Array.from({ length: 100 }, (_, c) => `<c><v>${c}</v></c>`).join('')}</row>`;
    const rawSheetData = Array.from({ length: 600 }, (_, r) => row(r + 1)).join('');
    const book = makeXlsx([{ name: 'Full', rawSheetData, dimension: 'A1:XFD1048576' }]);
    const { reason, message } = await refusedWith(xlsxReader, book, { ...limits, maxCells: 50_000 });
    expect([reason, message]).toEqual(['TOO_COMPLEX', expect.stringContaining('more than 50000 cells')]);
  });

  test('a few cells spread over a huge range fail TOO_COMPLEX rather than padding millions of blanks', async () => {
    const rawSheetData = Array.from(
      { length: 3000 },
      (_, k) => `<row r="${k + 1}"><c r="${columnOf(k + 1)}${k + 1}"><v>1</v></c></row>`,
    ).join('');
    const book = makeXlsx([{ name: 'Diagonal', rawSheetData }]);
    expect((await refusedWith(xlsxReader, book, { ...limits, maxCells: 1_000_000 })).reason).toBe('TOO_COMPLEX');
  });

  test.each([
    ['not a zip', new TextEncoder().encode('just some text, not a package')],
    ['a truncated zip', makeDocx([{ paragraph: 'cut' }]).subarray(0, 200)],
    ['a zip without Office parts', zipParts({ 'notes.txt': 'hello' })],
    [
      'a corrupt deflate stream',
      docxAround({ name: 'word/document.xml', data: new Uint8Array([0xff, 0xff, 0xff]), size: 10 }),
    ],
  ])('%s fails INVALID_DOCUMENT', async (_name, bytes) => {
    expect((await refusedWith(docxReader, bytes)).reason).toBe('INVALID_DOCUMENT');
  });
});

function columnOf(column: number): string {
  let letters = '';
  for (let rest = column; rest > 0; rest = Math.floor((rest - 1) / 26)) {
    letters = String.fromCharCode(65 + ((rest - 1) % 26)) + letters;
  }
  return letters;
}
