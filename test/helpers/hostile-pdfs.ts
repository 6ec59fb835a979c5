import { createDeflate, deflateSync } from 'node:zlib';

// Hostile PDFs, written byte by byte so that every one is explainable: each class of the hostile-document
// table (and a few more) as the smallest document that shows it. Nothing here is a stored blob;
// the tests and `npm run bench -- hostile` generate them.
//
//   cmap-8-ranges     a font whose ToUnicode CMap maps 8 ranges of 2^24−1 codes (pdf.js: fatal
//                     "invalid size" in the whole process)
//   cmap-1-range      one such range (pdf.js: ~2 GB of RSS, then "completes")
//   noop-stream       a content stream inflating to 100 MB of `q Q` (no-op operators)
//   font-bomb         an embedded TrueType font program inflating to 300 MB
//   shared-stream     20 pages whose /Contents are one stream inflating to ~14 MB
//   reference-loop    a page tree whose Kids point back at itself, and a form XObject drawing itself
//   deep-nesting      an array nested 100 000 deep in the page dictionary
//   huge-page-count   a page tree announcing 10^9 pages

export type HostileClass =
  | 'cmap-8-ranges'
  | 'cmap-1-range'
  | 'noop-stream'
  | 'font-bomb'
  | 'shared-stream'
  | 'reference-loop'
  | 'deep-nesting'
  | 'huge-page-count';

export const hostileClasses: HostileClass[] = [
  'cmap-8-ranges',
  'cmap-1-range',
  'noop-stream',
  'font-bomb',
  'shared-stream',
  'reference-loop',
  'deep-nesting',
  'huge-page-count',
];

type Body = string | Buffer;

/** An indirect object's dictionary and, for a stream, its (already encoded) data. */
interface PdfObject {
  dict: string;
  stream?: Buffer;
}

/** A PDF from objects numbered 1..n (object 1 is the catalog), with a correct xref table. */
export function rawPdf(objects: PdfObject[]): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = parts[0]!.length;
  const offsets: number[] = [];
  const push = (b: Body) => {
    const buf = typeof b === 'string' ? Buffer.from(b, 'latin1') : b;
    parts.push(buf);
    offset += buf.length;
  };
  objects.forEach((o, i) => {
    offsets.push(offset);
    if (o.stream) {
      push(`${i + 1} 0 obj\n<< ${o.dict} /Length ${o.stream.length} >>\nstream\n`);
      push(o.stream);
      push('\nendstream\nendobj\n');
    } else {
      push(`${i + 1} 0 obj\n${o.dict}\nendobj\n`);
    }
  });
  const xref = offset;
  push(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`);
  for (const o of offsets) push(`${String(o).padStart(10, '0')} 00000 n \n`);
  push(`trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.concat(parts);
}

/** Deflates `total` bytes of `unit` repeated, without ever holding them (a stream of 1 MiB pieces). */
export async function deflateRepeated(unit: string, total: number): Promise<Buffer> {
  const pieceLength = Math.max(unit.length, Math.floor((1 << 20) / unit.length) * unit.length);
  const piece = Buffer.from(unit.repeat(pieceLength / unit.length), 'latin1');
  const deflate = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (b: Buffer) => out.push(b));
  const done = new Promise<void>((resolve, reject) => {
    deflate.on('end', resolve);
    deflate.on('error', reject);
  });
  for (let written = 0; written < total; written += piece.length) {
    const n = Math.min(piece.length, total - written);
    if (!deflate.write(n === piece.length ? piece : piece.subarray(0, n)))
      await new Promise((r) => deflate.once('drain', r));
  }
  deflate.end();
  await done;
  return Buffer.concat(out);
}

const hex = (n: number, digits: number) => n.toString(16).toUpperCase().padStart(digits, '0');

/** A ToUnicode CMap with `ranges` bfranges of 2^24−1 four-byte codes each. */
export function hugeToUnicode(ranges: number): string {
  const span = 2 ** 24 - 2; // high − low: 2^24−1 codes, pdf.js's largest accepted range
  const lines = Array.from(
    { length: ranges },
    (_, i) => `<${hex(i * 2 ** 24, 8)}> <${hex(i * 2 ** 24 + span, 8)}> <0041>`,
  );
  return [
    '/CIDInit /ProcSet findresource begin 12 dict begin begincmap',
    '/CMapName /Hostile def /CMapType 2 def',
    '1 begincodespacerange <00000000> <FFFFFFFF> endcodespacerange',
    `${ranges} beginbfrange`,
    ...lines,
    'endbfrange endcmap CMapName currentdict /CMap defineresource pop end end',
  ].join('\n');
}

const text = (s: string) => Buffer.from(`BT /F1 12 Tf 72 720 Td (${s}) Tj ET`, 'latin1');
const catalog = { dict: '<< /Type /Catalog /Pages 2 0 R >>' };
const helvetica = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';

/** One page (object 3) with the given content stream (object 4) and font (object 5 onward). */
function onePage(content: PdfObject, font: PdfObject[], extraPage = ''): PdfObject[] {
  return [
    catalog,
    { dict: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>' },
    {
      dict: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> ${extraPage}>>`,
    },
    content,
    ...font,
  ];
}

async function cmapBomb(ranges: number): Promise<Buffer> {
  // The CMap uncompressed, as the audit's few-hundred-byte files had it.
  return rawPdf(
    onePage({ dict: '', stream: text('Hello') }, [
      { dict: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>' },
      { dict: '', stream: Buffer.from(hugeToUnicode(ranges), 'latin1') },
    ]),
  );
}

const generators: Record<HostileClass, () => Promise<Buffer>> = {
  'cmap-8-ranges': () => cmapBomb(8),
  'cmap-1-range': () => cmapBomb(1),
  'noop-stream': async () =>
    rawPdf(
      onePage({ dict: '/Filter /FlateDecode', stream: await deflateRepeated('q Q\n', 100 * 1024 * 1024) }, [
        { dict: helvetica },
      ]),
    ),
  'font-bomb': async () => {
    const program = await deflateRepeated('\0', 300 * 1024 * 1024);
    return rawPdf(
      onePage({ dict: '', stream: text('Hello') }, [
        {
          dict: '<< /Type /Font /Subtype /TrueType /BaseFont /Bomb /FirstChar 32 /LastChar 126 /FontDescriptor 6 0 R >>',
        },
        {
          dict: '<< /Type /FontDescriptor /FontName /Bomb /Flags 32 /FontBBox [0 0 1000 1000] /ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 /FontFile2 7 0 R >>',
        },
        { dict: '/Filter /FlateDecode', stream: program },
      ]),
    );
  },
  'shared-stream': async () => {
    const pages = 20;
    const content = await deflateRepeated('q Q\n', 14 * 1024 * 1024);
    const kids = Array.from({ length: pages }, (_, i) => `${i + 5} 0 R`).join(' ');
    return rawPdf([
      catalog,
      { dict: `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>` },
      { dict: '/Filter /FlateDecode', stream: content },
      { dict: helvetica },
      ...Array.from({ length: pages }, () => ({
        dict: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R /Resources << /Font << /F1 4 0 R >> >> >>',
      })),
    ]);
  },
  'reference-loop': async () =>
    rawPdf([
      catalog,
      // The root's Kids hold a page and the root itself; the page draws a form that draws itself.
      { dict: '<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>' },
      {
        dict: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> /XObject << /X1 6 0 R >> >> >>',
      },
      { dict: '', stream: Buffer.from('BT /F1 12 Tf 72 720 Td (Looping) Tj ET /X1 Do', 'latin1') },
      { dict: helvetica },
      {
        dict: '/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << /X1 6 0 R >> >>',
        stream: Buffer.from('/X1 Do', 'latin1'),
      },
    ]),
  'deep-nesting': async () => {
    const depth = 100_000;
    return rawPdf(
      onePage(
        { dict: '', stream: text('Nested') },
        [{ dict: helvetica }],
        `/Deep ${'['.repeat(depth)}${']'.repeat(depth)} `,
      ),
    );
  },
  'huge-page-count': async () =>
    rawPdf([
      catalog,
      { dict: '<< /Type /Pages /Kids [3 0 R] /Count 1000000000 >>' },
      {
        dict: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
      },
      { dict: '', stream: text('Many') },
      { dict: helvetica },
    ]),
};

// Documents that are cheap to read but ruinous to draw, for OCR (their pages have no text, so
// they go to pdf-ocr):
//   transparency-groups  a 2 KB page drawing one transparency group (a form XObject with
//                        /Group /Transparency: a page-sized scratch canvas each time) 100 000 times
//   huge-image           one 16000×16000 grey image (256 MB decoded) in a ~250 KB file
//   many-images          one page drawing 24 distinct 2500×2500 grey images: each within the
//                        image budget of a small drawing child, together far beyond its memory

export type OcrHostileClass = 'transparency-groups' | 'huge-image' | 'many-images';

export const ocrHostileClasses: OcrHostileClass[] = ['transparency-groups', 'huge-image', 'many-images'];

const MANY_IMAGES = 24;

const ocrGenerators: Record<OcrHostileClass, () => Promise<Buffer>> = {
  'transparency-groups': async () =>
    rawPdf([
      catalog,
      { dict: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>' },
      {
        dict: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /XObject << /X1 5 0 R >> >> >>',
      },
      { dict: '/Filter /FlateDecode', stream: await deflateRepeated('/X1 Do\n', 100_000 * 7) },
      {
        dict: '/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Group << /S /Transparency >> /Resources << >>',
        stream: Buffer.from('0.5 g 72 72 468 648 re f', 'latin1'),
      },
    ]),
  'huge-image': async () =>
    rawPdf([
      catalog,
      { dict: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>' },
      {
        dict: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /XObject << /Im1 5 0 R >> >> >>',
      },
      { dict: '', stream: Buffer.from('q 612 0 0 792 0 0 cm /Im1 Do Q', 'latin1') },
      {
        dict: '/Type /XObject /Subtype /Image /Width 16000 /Height 16000 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode',
        stream: await deflateRepeated('\xff', 16_000 * 16_000),
      },
    ]),
  'many-images': async () => {
    const image = await deflateRepeated('\x80', 2500 * 2500);
    const names = Array.from({ length: MANY_IMAGES }, (_, i) => `/Im${i} ${i + 5} 0 R`).join(' ');
    const draws = Array.from(
      { length: MANY_IMAGES },
      (_, i) => `q 100 0 0 100 ${(i % 6) * 100} ${Math.floor(i / 6) * 100} cm /Im${i} Do Q`,
    );
    return rawPdf([
      catalog,
      { dict: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>' },
      {
        dict: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /XObject << ${names} >> >> >>`,
      },
      { dict: '', stream: Buffer.from(draws.join('\n'), 'latin1') },
      ...Array.from({ length: MANY_IMAGES }, () => ({
        dict: '/Type /XObject /Subtype /Image /Width 2500 /Height 2500 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode',
        stream: image,
      })),
    ]);
  },
};

const ocrCache = new Map<OcrHostileClass, Promise<Buffer>>();

/** The OCR-hostile PDF of a class (generated once per process). */
export function ocrHostilePdf(kind: OcrHostileClass): Promise<Buffer> {
  const pdf = ocrCache.get(kind) ?? ocrGenerators[kind]();
  ocrCache.set(kind, pdf);
  return pdf;
}

const cache = new Map<HostileClass, Promise<Buffer>>();

/** The hostile PDF of a class (generated once per process). */
export function hostilePdf(kind: HostileClass): Promise<Buffer> {
  const pdf = cache.get(kind) ?? generators[kind]();
  cache.set(kind, pdf);
  return pdf;
}

/** A small, honest one-page PDF in the same raw form (a control for the suite). */
export function plainRawPdf(sentence = 'A plain page of text.'): Buffer {
  return rawPdf(onePage({ dict: '/Filter /FlateDecode', stream: deflateSync(text(sentence)) }, [{ dict: helvetica }]));
}
