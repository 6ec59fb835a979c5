import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fontkit from '@pdf-lib/fontkit';
import { PDFDict, PDFDocument, PDFName, StandardFonts } from 'pdf-lib';

// PDFs that exercise what a clean Latin text layer does not, made here from nothing but
// pdf-lib, fonts shipped in node_modules, and hand-written PDF objects:
// - a Japanese PDF whose font uses a predefined CJK CMap (UniJIS-UCS2-H, no font embedded, as
//   many real Japanese PDFs are): its text comes out only when pdf.js is given its CMaps;
// - an Arabic PDF drawn as producers draw it: shaped glyphs (presentation forms) in visual order,
//   a word per text run from right to left, mapped to Unicode by a ToUnicode CMap;
// - a PDF whose embedded font has no Unicode map (glyph ids only): pdf.js returns control
//   characters, only OCR can read it;
// - a scanned PDF: pages of known English sentences drawn to images and wrapped with no text.

// ---------------------------------------------------------------- a minimal PDF writer

type PdfObject = string | { dict: string; stream: string };

/** A PDF of the given objects (object n is objects[n-1]; 1 must be the catalog). */
function writePdf(objects: PdfObject[]): Uint8Array {
  const chunks: string[] = ['%PDF-1.7\n%\u00e2\u00e3\u00cf\u00d3\n'];
  const offsets: number[] = [];
  let length = Buffer.byteLength(chunks[0]!, 'latin1');
  objects.forEach((o, i) => {
    offsets.push(length);
    const body =
      typeof o === 'string'
        ? o
        : `${o.dict.replace(/>>\s*$/, '')} /Length ${Buffer.byteLength(o.stream, 'latin1')} >>\nstream\n${o.stream}\nendstream`;
    const text = `${i + 1} 0 obj\n${body}\nendobj\n`;
    chunks.push(text);
    length += Buffer.byteLength(text, 'latin1');
  });
  const xref = [
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`,
    ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`),
  ].join('');
  chunks.push(xref, `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`);
  return new Uint8Array(Buffer.from(chunks.join(''), 'latin1'));
}

/** Objects for a document of pages with one font: catalog, pages, font objects, then page + content per page. */
function pagesPdf(fontObjects: (first: number) => PdfObject[], contents: string[]): Uint8Array {
  const fonts = fontObjects(3);
  const firstPage = 3 + fonts.length;
  const kids = contents.map((_, i) => `${firstPage + i * 2} 0 R`).join(' ');
  const objects: PdfObject[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${contents.length} >>`,
    ...fonts,
  ];
  contents.forEach((content, i) => {
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${firstPage + i * 2 + 1} 0 R >>`,
      { dict: '<< >>', stream: content },
    );
  });
  return writePdf(objects);
}

// ---------------------------------------------------------------- Japanese (predefined CMap)

/** One known Japanese passage per page (two sentences each). */
export const JAPANESE_PAGES = [
  '東京は日本の首都です。富士山は東京から見えます。',
  '京都には古い寺がたくさんあります。金閣寺は有名です。',
  '大阪の料理はとても美味しいです。たこ焼きが人気です。',
];

const ucs2Hex = (s: string) => Array.from(s, (ch) => ch.codePointAt(0)!.toString(16).padStart(4, '0')).join('');

/** Japanese text in a non-embedded CID font with the predefined CMap UniJIS-UCS2-H (Adobe-Japan1). */
export function makeJapanesePdf(pages = JAPANESE_PAGES): Uint8Array {
  return pagesPdf(
    (f) => [
      `<< /Type /Font /Subtype /Type0 /BaseFont /KozMinPr6N-Regular /Encoding /UniJIS-UCS2-H /DescendantFonts [${f + 1} 0 R] >>`,
      `<< /Type /Font /Subtype /CIDFontType0 /BaseFont /KozMinPr6N-Regular /CIDSystemInfo << /Registry (Adobe) /Ordering (Japan1) /Supplement 6 >> /FontDescriptor ${f + 2} 0 R /DW 1000 >>`,
      '<< /Type /FontDescriptor /FontName /KozMinPr6N-Regular /Flags 6 /FontBBox [-200 -300 1200 1000] /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 740 /StemV 80 >>',
    ],
    pages.map((text) => `BT /F1 18 Tf 72 700 Td <${ucs2Hex(text)}> Tj ET`),
  );
}

// ---------------------------------------------------------------- Arabic (presentation forms, visual order)

/** One known Arabic sentence per page, in logical order as a user types it. */
export const ARABIC_PAGES = ['القاهرة عاصمة مصر.', 'النيل أطول نهر في أفريقيا.', 'الكتاب على الطاولة.'];

/** Arabic sentences whose words are drawn with ligatures: lam-khah (الخطوط) and lam-alef (السلام). */
export const ARABIC_LIGATURE_PAGES = ['الخطوط العربية جميلة.', 'السلام عليكم يا أصدقاء.'];

/** Hebrew sentences whose words are drawn with the alef-lamed ligature (ישראל, אלון). */
export const HEBREW_LIGATURE_PAGES = ['ישראל היא ארץ קטנה.', 'עץ אלון גדל ביער.'];

// Presentation Forms-B: the isolated form of each letter; dual-joining letters are followed by
// their final, initial and medial forms, right-joining ones by their final form only.
const DUAL: Record<string, number> = {
  ب: 0xfe8f,
  ت: 0xfe95,
  ج: 0xfe9d,
  ح: 0xfea1,
  خ: 0xfea5,
  س: 0xfeb1,
  ص: 0xfeb9,
  ط: 0xfec1,
  ع: 0xfec9,
  ف: 0xfed1,
  ق: 0xfed5,
  ك: 0xfed9,
  ل: 0xfedd,
  م: 0xfee1,
  ن: 0xfee5,
  ه: 0xfee9,
  ي: 0xfef1,
};
const RIGHT: Record<string, number> = { ا: 0xfe8d, أ: 0xfe83, ة: 0xfe93, د: 0xfea9, ر: 0xfead, و: 0xfeed, ى: 0xfeef };
const LAM_KHAH_INITIAL = 0xfccb; // Presentation Forms-A, a ligature many Naskh fonts draw

/** A word's glyphs (presentation forms) in logical order: contextual forms, lam-alef and lam-khah ligatures. */
export function shapeArabicWord(word: string): string[] {
  const letters = Array.from(word);
  const glyphs: string[] = [];
  for (let i = 0; i < letters.length; i++) {
    const ch = letters[i]!;
    const joinsPrevious = i > 0 && letters[i - 1]! in DUAL;
    if (ch === 'ل' && (letters[i + 1] === 'ا' || letters[i + 1] === 'أ')) {
      const base = letters[i + 1] === 'ا' ? 0xfefb : 0xfef7; // lam-alef isolated; +1 final
      glyphs.push(String.fromCodePoint(base + (joinsPrevious ? 1 : 0)));
      i++;
      continue;
    }
    if (ch === 'ل' && letters[i + 1] === 'خ' && !joinsPrevious && i + 2 < letters.length) {
      glyphs.push(String.fromCodePoint(LAM_KHAH_INITIAL));
      i++;
      continue;
    }
    const joinsNext = ch in DUAL && i + 1 < letters.length;
    if (ch in DUAL)
      glyphs.push(String.fromCodePoint(DUAL[ch]! + (joinsPrevious ? (joinsNext ? 3 : 1) : joinsNext ? 2 : 0)));
    else if (ch in RIGHT) glyphs.push(String.fromCodePoint(RIGHT[ch]! + (joinsPrevious ? 1 : 0)));
    else glyphs.push(ch);
  }
  return glyphs;
}

/** A Hebrew word's glyphs in logical order: letters, alef-lamed drawn as its ligature (U+FB4F). */
export function shapeHebrewWord(word: string): string[] {
  return Array.from(word.replaceAll('אל', '\ufb4f'));
}

/**
 * How a producer's ToUnicode CMap maps a glyph: to its presentation-form code point, or to the
 * letters it shows (a ligature to two letters in logical order, as word processors write it).
 */
type GlyphMapping = 'presentation-forms' | 'letters';

/** A ToUnicode destination string: UTF-16BE code units in hex. */
const utf16Hex = (text: string) =>
  Array.from({ length: text.length }, (_, i) => text.charCodeAt(i).toString(16).padStart(4, '0')).join('');

/**
 * Right-to-left text as producers write it: each word a text run placed right to left, its glyphs
 * in visual order (the word's last letter leftmost), one-byte codes mapped to Unicode by a
 * ToUnicode CMap. The font is not embedded: only the text layer matters here.
 */
function makeRightToLeftPdf(pages: string[], shape: (word: string) => string[], mapping: GlyphMapping): Uint8Array {
  const codes = new Map<string, number>();
  const codeOf = (glyph: string) => {
    if (!codes.has(glyph)) codes.set(glyph, 0x80 + codes.size);
    return codes.get(glyph)!;
  };
  const size = 20;
  const advance = 0.5 * size; // every glyph 500/1000 em wide (the Widths below)
  const contents = pages.map((sentence) => {
    const words = sentence.replace(/\.$/, '').split(' ');
    let right = 540;
    const runs: string[] = [];
    for (const word of words) {
      const visual = shape(word).reverse();
      const left = right - visual.length * advance;
      const hex = visual.map((g) => codeOf(g).toString(16).padStart(2, '0')).join('');
      runs.push(`1 0 0 1 ${left.toFixed(2)} 700 Tm <${hex}> Tj`);
      right = left - advance; // a space's width between words
    }
    runs.push(`1 0 0 1 ${right.toFixed(2)} 700 Tm <${codeOf('.').toString(16)}> Tj`); // the full stop, leftmost
    // Drawn left to right, as producers do: the sentence's last word first.
    return `BT /F1 ${size} Tf ${runs.reverse().join(' ')} ET`;
  });
  const entries = [...codes].map(
    ([glyph, code]) => `<${code.toString(16)}> <${utf16Hex(mapping === 'letters' ? glyph.normalize('NFKC') : glyph)}>`,
  );
  const toUnicode = [
    '/CIDInit /ProcSet findresource begin 12 dict begin begincmap',
    '/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def /CMapName /Adobe-Identity-UCS def /CMapType 2 def',
    '1 begincodespacerange <00> <ff> endcodespacerange',
    `${entries.length} beginbfchar ${entries.join(' ')} endbfchar`,
    'endcmap CMapName currentdict /CMap defineresource pop end end',
  ].join('\n');
  const widths = Array.from({ length: 128 }, () => 500).join(' ');
  return pagesPdf(
    (f) => [
      `<< /Type /Font /Subtype /TrueType /BaseFont /ArialMT /FirstChar 128 /LastChar 255 /Widths [${widths}] /FontDescriptor ${f + 1} 0 R /ToUnicode ${f + 2} 0 R >>`,
      '<< /Type /FontDescriptor /FontName /ArialMT /Flags 32 /FontBBox [-665 -325 2000 1006] /ItalicAngle 0 /Ascent 905 /Descent -212 /CapHeight 716 /StemV 80 >>',
      { dict: '<< >>', stream: toUnicode },
    ],
    contents,
  );
}

/** Arabic drawn in presentation forms (visual order), mapped to those forms or to the letters they show. */
export function makeArabicPdf(pages = ARABIC_PAGES, mapping: GlyphMapping = 'presentation-forms'): Uint8Array {
  return makeRightToLeftPdf(pages, shapeArabicWord, mapping);
}

/** Hebrew drawn in visual order with the alef-lamed ligature, mapped to it or to its two letters. */
export function makeHebrewPdf(pages = HEBREW_LIGATURE_PAGES, mapping: GlyphMapping = 'presentation-forms'): Uint8Array {
  return makeRightToLeftPdf(pages, shapeHebrewWord, mapping);
}

// ---------------------------------------------------------------- glyph ids only (no Unicode map)

/** Known English passages of the glyph-id PDF, one per page. */
export const GLYPH_ID_PAGES = [
  'The orchard behind the mill grows seven kinds of apples.',
  'Every autumn the village holds a cider festival by the river.',
];

/** The Liberation Sans font pdf.js ships (SIL Open Font License) as a TrueType file. */
async function liberationSans(): Promise<Uint8Array> {
  const pdfjs = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
  return readFile(join(pdfjs, 'standard_fonts/LiberationSans-Regular.ttf'));
}

/**
 * Text in an embedded TrueType subset (Identity-H, glyph ids as codes) with the ToUnicode CMap
 * removed: the font draws correctly, but nothing maps its codes to characters.
 */
export async function makeGlyphIdPdf(pages = GLYPH_ID_PAGES): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.registerFontkit(fontkit);
  const font = await doc.embedFont(await liberationSans(), { subset: true });
  for (const text of pages) {
    const page = doc.addPage([612, 792]);
    page.drawText(text, { x: 48, y: 700, size: 20, font });
  }
  const again = await PDFDocument.load(await doc.save());
  for (const [, object] of again.context.enumerateIndirectObjects()) {
    if (object instanceof PDFDict && object.get(PDFName.of('ToUnicode'))) object.delete(PDFName.of('ToUnicode'));
  }
  return again.save();
}

// ---------------------------------------------------------------- scanned (images only)

/** Five pages of a made-up town guide: known English sentences, one passage per page. */
export const SCANNED_PAGES = [
  'Chapter one describes the harbour town of Westmere. The fishing fleet leaves at dawn.',
  'The market opens on Tuesdays and Saturdays. Bread and cheese are sold near the fountain.',
  'The lighthouse keeper is named Margaret Hollis. She has kept the light burning for thirty years.',
  'Storms arrive from the north in November. Ships shelter behind the long stone pier.',
  'The town council meets in the old school hall. Visitors are welcome at every meeting.',
];

/** A text PDF of the passages (Helvetica 18 pt, wrapped), the source of the scan. */
export async function makePassagesPdf(pages: string[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const page = doc.addPage([612, 792]);
    let line = '';
    let y = 700;
    for (const word of text.split(' ')) {
      if (line && font.widthOfTextAtSize(`${line} ${word}`, 18) > 500) {
        page.drawText(line, { x: 56, y, size: 18, font });
        y -= 28;
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    if (line) page.drawText(line, { x: 56, y, size: 18, font });
  }
  return doc.save();
}

/**
 * A scan of the passages: each page of makePassagesPdf drawn by pdf.js onto a canvas at `dpi`
 * (the same renderer OCR uses), encoded as PNG and placed as the only content of a page of the
 * same size: no text layer at all.
 */
export async function makeScannedPdf(pages = SCANNED_PAGES, dpi = 100): Promise<Uint8Array> {
  const { renderPages, loadCanvas } = await import('../../shared/pdf/ocr/render.ts');
  const canvas = await loadCanvas();
  const source = await makePassagesPdf(pages);
  const doc = await PDFDocument.create();
  await renderPages(
    source,
    pages.map((_, i) => i + 1),
    { dpi },
    async (image) => {
      const c = canvas.createCanvas(image.width, image.height);
      const ctx = c.getContext('2d');
      const pixels = ctx.createImageData(image.width, image.height);
      const grey = image.pgm.subarray(image.pgm.length - image.width * image.height);
      for (let i = 0; i < grey.length; i++) {
        pixels.data[i * 4] = pixels.data[i * 4 + 1] = pixels.data[i * 4 + 2] = grey[i]!;
        pixels.data[i * 4 + 3] = 255;
      }
      ctx.putImageData(pixels, 0, 0);
      const png = await doc.embedPng(await c.encode('png'));
      doc.addPage([612, 792]).drawImage(png, { x: 0, y: 0, width: 612, height: 792 });
    },
  );
  return doc.save();
}

/**
 * A black-and-white scan, as office scanners make them: each passage drawn like makeScannedPdf's,
 * thresholded to one bit per pixel and stored as a CCITT G3 image (test/helpers/ccitt.ts), the
 * only content of its page. `null` makes a page with nothing drawn (an empty content stream).
 */
export async function makeCcittScanPdf(pages: (string | null)[], dpi = 150): Promise<Uint8Array> {
  const { renderPages } = await import('../../shared/pdf/ocr/render.ts');
  const { encodeCcittG3 } = await import('./ccitt.ts');
  const passages = pages.filter((p): p is string => p !== null);
  const images: { width: number; height: number; data: Buffer }[] = [];
  await renderPages(
    await makePassagesPdf(passages),
    passages.map((_, i) => i + 1),
    { dpi },
    (image) => {
      const grey = image.pgm.subarray(image.pgm.length - image.width * image.height);
      const data = encodeCcittG3(image.width, image.height, (x, y) => grey[y * image.width + x]! < 128);
      images.push({ width: image.width, height: image.height, data });
    },
  );
  const objects: PdfObject[] = ['<< /Type /Catalog /Pages 2 0 R >>', ''];
  const kids: string[] = [];
  for (const passage of pages) {
    const pageObject = objects.length + 1;
    kids.push(`${pageObject} 0 R`);
    if (passage === null) {
      objects.push(
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> /Contents ${pageObject + 1} 0 R >>`,
        { dict: '<< >>', stream: '' },
      );
      continue;
    }
    const image = images.shift()!;
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im1 ${pageObject + 2} 0 R >> >> /Contents ${pageObject + 1} 0 R >>`,
      { dict: '<< >>', stream: 'q 612 0 0 792 0 0 cm /Im1 Do Q' },
      {
        dict: `<< /Type /XObject /Subtype /Image /Width ${image.width} /Height ${image.height} /ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /CCITTFaxDecode /DecodeParms << /K 0 /Columns ${image.width} /Rows ${image.height} >> >>`,
        stream: image.data.toString('latin1'),
      },
    );
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${kids.length} >>`;
  return writePdf(objects);
}
