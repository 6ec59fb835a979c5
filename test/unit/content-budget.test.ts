import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { checkContentBudget, cmapRangeCodes } from '#shared/pdf/content-budget.ts';
import { PermanentFailure } from '#shared/files/failures.ts';
import { hugeToUnicode, plainRawPdf, rawPdf } from '#test/helpers/hostile-pdfs.ts';

// The content budget's pre-check, on PDFs written byte by byte (test/helpers/hostile-pdfs.ts).

const limits = { maxStreamBytes: 1024 * 1024, maxContentBytes: 4 * 1024 * 1024, maxCmapCodes: 65_536 };

function refusal(pdf: Buffer): PermanentFailure {
  try {
    checkContentBudget(pdf, limits);
  } catch (err) {
    return err as PermanentFailure;
  }
  throw new Error('the document was accepted');
}

test('counts the codes of bfrange and cidrange blocks, arrays of destinations included', () => {
  expect(cmapRangeCodes('2 beginbfrange <0000> <00FF> <0041> <0100> <0101> [<0041> <0042>] endbfrange')).toBe(258);
  expect(cmapRangeCodes('1 begincidrange <0000> <FFFF> 1 endcidrange')).toBe(65_536);
  expect(cmapRangeCodes(hugeToUnicode(8))).toBe(8 * (2 ** 24 - 1));
});

test('an ordinary page passes, with its streams measured', () => {
  const report = checkContentBudget(plainRawPdf('Some text.'), limits);
  expect(report).toEqual({
    streams: 1,
    contentBytes: 'BT /F1 12 Tf 72 720 Td (Some text.) Tj ET'.length,
    cmapCodes: 0,
  });
});

test('a stream that inflates past its limit is TOO_COMPLEX, without inflating all of it', () => {
  const bomb = deflateSync(Buffer.alloc(64 * 1024 * 1024));
  const err = refusal(rawPdf([{ dict: '<< /Type /Catalog >>' }, { dict: '/Filter /FlateDecode', stream: bomb }]));
  expect(err).toBeInstanceOf(PermanentFailure);
  expect(err.reason).toBe('TOO_COMPLEX');
  expect(err.message).toMatch(/stream expands to more than 1 MB/);
});

test('a stream referred to many times counts each time (pages sharing one content stream)', () => {
  const content = deflateSync(Buffer.alloc(600 * 1024, 'q Q\n'));
  const pages = (n: number) =>
    rawPdf([
      { dict: '<< /Type /Catalog /Pages 2 0 R >>' },
      {
        dict: `<< /Type /Pages /Count ${n} /Kids [${Array.from({ length: n }, (_, i) => `${i + 4} 0 R`).join(' ')}] >>`,
      },
      { dict: '/Filter /FlateDecode', stream: content },
      ...Array.from({ length: n }, () => ({ dict: '<< /Type /Page /Parent 2 0 R /Contents 3 0 R >>' })),
    ]);
  expect(checkContentBudget(pages(6), limits).contentBytes).toBe(6 * 600 * 1024);
  expect(refusal(pages(7)).message).toMatch(/content expands to more than 4 MB/);
});

test('images are not counted (text extraction never decodes them)', () => {
  const pixels = deflateSync(Buffer.alloc(8 * 1024 * 1024));
  const pdf = rawPdf([
    { dict: '<< /Type /Catalog >>' },
    { dict: '/Type /XObject /Subtype /Image /Filter /FlateDecode', stream: pixels },
  ]);
  expect(checkContentBudget(pdf, limits)).toMatchObject({ streams: 0, contentBytes: 0 });
});

test('a CMap mapping more codes than allowed is TOO_COMPLEX, compressed or not', () => {
  const cmap = Buffer.from(hugeToUnicode(1), 'latin1');
  for (const stream of [
    { dict: '', stream: cmap },
    { dict: '/Filter /FlateDecode', stream: deflateSync(cmap) },
  ]) {
    const err = refusal(rawPdf([{ dict: '<< /Type /Catalog >>' }, stream]));
    expect(err.reason).toBe('TOO_COMPLEX');
    expect(err.message).toMatch(/CMaps map more than 65536 codes/);
  }
});

test('damaged deflate data is left to pdf.js (counted at its raw size)', () => {
  const pdf = rawPdf([
    { dict: '<< /Type /Catalog >>' },
    { dict: '/Filter /FlateDecode', stream: Buffer.from('not deflate at all') },
  ]);
  expect(checkContentBudget(pdf, limits)).toMatchObject({ streams: 1, contentBytes: 18 });
});

describe('a file, read in windows', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'content-budget-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  const onDisk = async (name: string, pdf: Buffer) => {
    const path = join(dir, name);
    await writeFile(path, pdf);
    return path;
  };

  test('measures as in memory, with streams and references across window boundaries', async () => {
    const content = deflateSync(Buffer.alloc(600 * 1024, 'q Q\n'));
    const pdf = rawPdf([
      { dict: '<< /Type /Catalog /Pages 2 0 R >>' },
      { dict: '<< /Type /Pages /Count 3 /Kids [4 0 R 5 0 R 6 0 R] >>' },
      { dict: '/Filter /FlateDecode', stream: content },
      ...Array.from({ length: 3 }, () => ({ dict: '<< /Type /Page /Parent 2 0 R /Contents 3 0 R >>' })),
      { dict: '/Type /XObject /Subtype /Image', stream: randomBytes(3 * 1024 * 1024) },
      { dict: '', stream: Buffer.from('BT (after the image) Tj ET') },
    ]);
    const path = await onDisk('windows.pdf', pdf);
    const inMemory = checkContentBudget(pdf, limits);
    expect(inMemory).toMatchObject({ streams: 2, contentBytes: 3 * 600 * 1024 + 'BT (after the image) Tj ET'.length });
    for (const window of [997, 64 * 1024, 8 * 1024 * 1024])
      expect(checkContentBudget(path, limits, window)).toEqual(inMemory);
  });

  test('a stream longer than the limit is TOO_COMPLEX without being read whole; an image of any size is skipped', async () => {
    const long = await onDisk(
      'long.pdf',
      rawPdf([{ dict: '<< /Type /Catalog >>' }, { dict: '', stream: Buffer.alloc(3 * 1024 * 1024, 'q Q\n') }]),
    );
    expect(() => checkContentBudget(long, limits, 4096)).toThrow(/stream expands to more than 1 MB/);
    const image = await onDisk(
      'image.pdf',
      rawPdf([{ dict: '<< /Type /Catalog >>' }, { dict: '/Subtype /Image', stream: randomBytes(5 * 1024 * 1024) }]),
    );
    expect(checkContentBudget(image, limits, 4096)).toMatchObject({ streams: 0, contentBytes: 0 });
  });
});
