// What the first bytes of a document say, before anything is stored (the fetch stage) and before
// a reader is chosen: a PDF, a package (zip: OOXML), an OLE compound file (legacy Office or an
// encrypted package), text (markup included), or something this service does not read. Only the
// bytes count, never the file's name or declared type (docs/DECISIONS.md "Documents, not only PDFs").

/** How much of the start of a file is looked at (readers accept `%PDF-` within the first KiB). */
export const HEAD_BYTES = 1024;

export type HeadKind = 'pdf' | 'zip' | 'cfb' | 'text';

const startsWith = (head: Uint8Array, ...bytes: number[]) => bytes.every((b, i) => head[i] === b);

/** Formats recognised only to say what they are when refused. */
const OTHERS: [string, (head: Uint8Array) => boolean][] = [
  ['a PNG image', (h) => startsWith(h, 0x89, 0x50, 0x4e, 0x47)],
  ['a JPEG image', (h) => startsWith(h, 0xff, 0xd8, 0xff)],
  ['a GIF image', (h) => startsWith(h, 0x47, 0x49, 0x46, 0x38)],
  ['a WebP image', (h) => startsWith(h, 0x52, 0x49, 0x46, 0x46) && startsWith(h.subarray(8), 0x57, 0x45, 0x42, 0x50)],
  ['a gzip archive', (h) => startsWith(h, 0x1f, 0x8b)],
  ['a 7-Zip archive', (h) => startsWith(h, 0x37, 0x7a, 0xbc, 0xaf)],
  ['a RAR archive', (h) => startsWith(h, 0x52, 0x61, 0x72, 0x21)],
  ['an RTF document', (h) => startsWith(h, 0x7b, 0x5c, 0x72, 0x74, 0x66)],
  ['an executable', (h) => startsWith(h, 0x7f, 0x45, 0x4c, 0x46) || startsWith(h, 0x4d, 0x5a)],
];

/** The formats read here, for messages. */
export const READ_FORMATS = 'PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), HTML, Markdown or plain text';

/** What the head of a file is, or what it is not: `{ refused }` names it for the user. */
export function sniffHead(head: Uint8Array): { kind: HeadKind } | { refused: string } {
  const window = head.subarray(0, HEAD_BYTES);
  if (startsWith(window, 0x50, 0x4b, 0x03, 0x04) || startsWith(window, 0x50, 0x4b, 0x05, 0x06)) return { kind: 'zip' };
  if (startsWith(window, 0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1)) return { kind: 'cfb' };
  // A version header anywhere in the first KiB, as PDF readers accept it (after some junk too).
  const latin = Buffer.from(window.buffer, window.byteOffset, window.byteLength).toString('latin1');
  if (/%PDF-\d\.\d/.test(latin)) return { kind: 'pdf' };
  if (looksLikeTextHead(window)) return { kind: 'text' };
  const other = OTHERS.find(([, test]) => test(window));
  return { refused: other?.[0] ?? 'binary data of an unknown kind' };
}

/**
 * Text in UTF-16 with a byte-order mark, or bytes without NULs that are (a possibly cut-off
 * prefix of) UTF-8. Legacy single-byte encodings fail here on purpose: they are read as UTF-8 or
 * refused by the text reader with a message that says how to save the file.
 */
function looksLikeTextHead(head: Uint8Array): boolean {
  if (startsWith(head, 0xff, 0xfe) || startsWith(head, 0xfe, 0xff)) return true;
  if (!head.length || head.includes(0)) return false;
  // A multi-byte sequence cut at the window's end is still text: drop up to 3 trailing bytes.
  for (let cut = 0; cut <= Math.min(3, head.length - 1); cut++) {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, head.length - cut));
      return true;
    } catch {
      // try a shorter prefix
    }
  }
  return false;
}
