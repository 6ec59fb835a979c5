import { PDFDocument, StandardFonts } from 'pdf-lib';
import { knownSentence } from './make-pdf.ts';

// A book as people upload them: a cover that is one large photograph (a baseline JPEG, as scanned
// or exported covers are) and pages of text after it. The cover has no text layer, so ingestion
// sends it to OCR, and drawing it decodes the whole image: 8992×10384 (93 M pixels) is the size
// of the real book whose cover a document-wide image budget refused.

/** Big-endian 16-bit length-prefixed JPEG marker segment. */
function segment(marker: number, body: number[]): Buffer {
  const length = body.length + 2;
  return Buffer.from([0xff, marker, length >> 8, length & 0xff, ...body]);
}

/**
 * A baseline JPEG of `width` × `height` YCbCr pixels, mid-grey: every 8×8 block's DC difference
 * and its end of block are each coded by a one-bit Huffman code, so the entropy-coded data is
 * 6 bits a block group, about 1 MB at 93 M pixels, while a decoder still decodes every block
 * (and holds width × height × 3 bytes).
 */
export function greyJpeg(width: number, height: number): Buffer {
  const mcus = Math.ceil(width / 8) * Math.ceil(height / 8);
  const bits = mcus * 6; // Y, Cb, Cr: a DC code and an EOB code each, one bit apiece
  const data = Buffer.alloc(Math.ceil(bits / 8));
  if (bits % 8) data[data.length - 1] = 0xff >> (bits % 8); // pad the last byte with 1 bits
  const oneCode = (tableClassAndId: number) => [tableClassAndId, 1, ...new Array<number>(15).fill(0), 0];
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xdb, [0x00, ...new Array<number>(64).fill(1)]),
    segment(0xc0, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 3, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0]),
    segment(0xc4, oneCode(0x00)), // DC table 0: category 0 only
    segment(0xc4, oneCode(0x10)), // AC table 0: end of block only
    segment(0xda, [3, 1, 0x00, 2, 0x00, 3, 0x00, 0, 63, 0]),
    data,
    Buffer.from([0xff, 0xd9]),
  ]);
}

export interface BookOptions {
  /** Pages of text after the cover. */
  textPages: number;
  coverWidth?: number;
  coverHeight?: number;
}

/** A book: page 1 the cover (one JPEG, no text), then `textPages` pages of known sentences (page n+1 holds knownSentence(n + 1, i)). */
export async function bookPdf({ textPages, coverWidth = 8992, coverHeight = 10384 }: BookOptions): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const cover = await doc.embedJpg(greyJpeg(coverWidth, coverHeight));
  doc.addPage([432, 648]).drawImage(cover, { x: 0, y: 0, width: 432, height: 648 });
  for (let page = 2; page <= textPages + 1; page++) {
    const p = doc.addPage([432, 648]);
    let y = 600;
    for (let i = 0; i < 12; i++) {
      p.drawText(knownSentence(page, i), { x: 36, y, size: 9, font });
      y -= 16;
    }
  }
  return doc.save();
}
