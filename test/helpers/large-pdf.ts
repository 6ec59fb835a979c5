import { randomBytes } from 'node:crypto';
import { knownSentence } from './make-pdf.ts';

// A PDF of any size, produced as a stream of chunks (never built in memory): each page carries a few
// known sentences (Helvetica) and one large image XObject of random, incompressible bytes. For the
// large-file tests and bench/large-pdf.ts, which write it to a socket or a file as it comes.

export interface LargePdfOptions {
  /** The file's size, about (within a page's text and the trailer). */
  bytes: number;
  /** Bytes of image data per page (the page count follows). */
  imageBytesPerPage?: number;
  sentencesPerPage?: number;
  /** Bytes of an image no page uses, written before the pages (a reader that loads only what pages need never reads it). */
  unusedImageBytes?: number;
}

/** The page count of a large PDF of these options. */
export function largePdfPages(o: LargePdfOptions): number {
  return Math.max(1, Math.round(o.bytes / (o.imageBytesPerPage ?? 4 * 1024 * 1024)));
}

/** The PDF's bytes, chunk by chunk (each at most an image's bytes). */
export async function* largePdf(o: LargePdfOptions): AsyncGenerator<Buffer> {
  const imageBytes = o.imageBytesPerPage ?? 4 * 1024 * 1024;
  const sentences = o.sentencesPerPage ?? 4;
  const pages = largePdfPages(o);
  // An 8-bit grey image of `side` × `rows` pixels holds the page's image bytes.
  const side = 2048;
  const rows = Math.max(1, Math.floor(imageBytes / side));
  const offsets: number[] = [];
  let at = 0;
  const out = (s: string | Buffer) => {
    const b = typeof s === 'string' ? Buffer.from(s, 'latin1') : s;
    at += b.length;
    return b;
  };
  const object = (n: number, body: string) => {
    offsets[n] = at;
    return out(`${n} 0 obj\n${body}\nendobj\n`);
  };
  // Objects: 1 catalog, 2 pages, 3 font, 4 the unused image, then per page p (0-based): page,
  // content, image.
  const pageObj = (p: number) => 5 + p * 3;
  yield out('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n');
  yield object(1, '<< /Type /Catalog /Pages 2 0 R >>');
  const kids = Array.from({ length: pages }, (_, p) => `${pageObj(p)} 0 R`).join(' ');
  yield object(2, `<< /Type /Pages /Count ${pages} /Kids [${kids}] >>`);
  yield object(3, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const unused = o.unusedImageBytes ?? 0;
  offsets[4] = at;
  yield out(
    `4 0 obj\n<< /Type /XObject /Subtype /Image /Width ${unused} /Height 1 /ColorSpace /DeviceGray ` +
      `/BitsPerComponent 8 /Length ${unused} >>\nstream\n`,
  );
  for (let left = unused; left > 0; left -= imageBytes) yield out(randomBytes(Math.min(left, imageBytes)));
  yield out('\nendstream\nendobj\n');
  for (let p = 0; p < pages; p++) {
    const n = pageObj(p);
    yield object(
      n,
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${n + 1} 0 R ` +
        `/Resources << /Font << /F1 3 0 R >> /XObject << /Im1 ${n + 2} 0 R >> >> >>`,
    );
    const lines = Array.from({ length: sentences }, (_, i) => {
      const text = knownSentence(p + 1, i).replace(/[()\\]/g, (c) => `\\${c}`);
      return `BT /F1 11 Tf 48 ${740 - i * 18} Td (${text}) Tj ET`;
    });
    const content = `${lines.join('\n')}\nq 400 0 0 300 100 100 cm /Im1 Do Q\n`;
    yield object(n + 1, `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`);
    offsets[n + 2] = at;
    yield out(
      `${n + 2} 0 obj\n<< /Type /XObject /Subtype /Image /Width ${side} /Height ${rows} ` +
        `/ColorSpace /DeviceGray /BitsPerComponent 8 /Length ${side * rows} >>\nstream\n`,
    );
    yield out(randomBytes(side * rows));
    yield out('\nendstream\nendobj\n');
  }
  const count = pageObj(pages);
  const xrefAt = at;
  let xref = `xref\n0 ${count}\n0000000000 65535 f \n`;
  for (let n = 1; n < count; n++) xref += `${String(offsets[n]).padStart(10, '0')} 00000 n \n`;
  yield out(`${xref}trailer\n<< /Size ${count} /Root 1 0 R >>\nstartxref\n${xrefAt}\n%%EOF\n`);
}
