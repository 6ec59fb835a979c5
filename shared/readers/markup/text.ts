// Bytes → text for the markup and text readers: UTF-8 (with or without a BOM), or UTF-16 LE/BE
// with a BOM, decoded strictly. Bytes that are not such text are refused with what they look like
// (docs/DECISIONS.md "Markup and text readers"): a legacy code page or a binary file is never read
// as garbage.

import { type ReaderLimits, ReadRefused } from '../reader.ts';
import { unfinishedTail } from '../utf8.ts';

type Encoding = 'utf-8' | 'utf-16le' | 'utf-16be';

/** The encoding a BOM names, and the BOM's length. */
function bomOf(bytes: Uint8Array): { encoding: Encoding; bom: number } {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { encoding: 'utf-8', bom: 3 };
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { encoding: 'utf-16le', bom: 2 };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { encoding: 'utf-16be', bom: 2 };
  return { encoding: 'utf-8', bom: 0 };
}

/** Signatures of the binary files people most often send instead of text. */
const SIGNATURES: [bytes: number[], what: string][] = [
  [[0x25, 0x50, 0x44, 0x46, 0x2d], 'a PDF'],
  [[0x50, 0x4b, 0x03, 0x04], 'a zip package (an Office document or an archive)'],
  [[0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], 'a legacy binary Office file (.doc, .xls, .ppt)'],
  [[0x89, 0x50, 0x4e, 0x47], 'a PNG image'],
  [[0xff, 0xd8, 0xff], 'a JPEG image'],
  [[0x47, 0x49, 0x46, 0x38], 'a GIF image'],
  [[0x1f, 0x8b], 'a gzip archive'],
  [[0x7b, 0x5c, 0x72, 0x74, 0x66], 'an RTF document'],
];

const startsWith = (bytes: Uint8Array, signature: number[]) => signature.every((b, k) => bytes[k] === b);

/**
 * Why these bytes are not text the readers decode (`why`), or their text (`text`, the BOM
 * dropped) when they are; `complete` says the bytes are the whole file, not a prefix of it.
 */
function checkText(bytes: Uint8Array, complete: boolean): { why: string } | { text: string } {
  const { encoding, bom } = bomOf(bytes);
  let body = bytes.subarray(bom);
  if (encoding !== 'utf-8') {
    // A prefix may end inside a code unit or a surrogate pair: decode whole units only.
    if (!complete) body = body.subarray(0, body.length - (body.length % 2) - 2 * Number(body.length >= 4));
    else if (body.length % 2 === 1)
      return { why: `an odd number of bytes after a UTF-16 byte-order mark (damaged ${encoding.toUpperCase()} text)` };
    try {
      return { text: new TextDecoder(encoding, { fatal: true, ignoreBOM: true }).decode(body) };
    } catch {
      return { why: `not valid ${encoding.toUpperCase()} text after its byte-order mark (damaged text)` };
    }
  }
  const signature = SIGNATURES.find(([sig]) => startsWith(body, sig));
  if (signature) return { why: signature[1] };
  // A NUL, then the controls other than tab, line and page breaks (rare in text, common in binary
  // formats), counted in the bytes: in UTF-8 a byte below 0x20 is always that character, never
  // part of another. (Buffer's indexOf is memchr; a Uint8Array's is a loop.)
  const nul = Buffer.from(body.buffer, body.byteOffset, body.byteLength).indexOf(0);
  if (nul >= 0) {
    // Text in UTF-16 without a BOM has a NUL in every other byte; anything else is binary data.
    const pairs = Math.min(body.length >> 1, 512);
    let odd = 0;
    let even = 0;
    for (let k = 0; k < pairs; k++) {
      if (body[2 * k] === 0) even++;
      if (body[2 * k + 1] === 0) odd++;
    }
    if (pairs > 0 && Math.max(odd, even) > 0.4 * pairs && Math.min(odd, even) < 0.05 * pairs)
      return { why: 'UTF-16 text without a byte-order mark: save it as UTF-8 (or UTF-16 with a BOM)' };
    return { why: `binary data (a NUL byte at offset ${nul + bom}), not text` };
  }
  // A prefix may end inside a character: drop up to three bytes of an unfinished sequence.
  if (!complete) body = body.subarray(0, body.length - unfinishedTail(body));
  let text: string;
  try {
    // ignoreBOM: the BOM is removed above, and a second one is the text's own character.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    return {
      why: 'text that is not valid UTF-8 (perhaps a legacy code page such as Windows-1252): save it as UTF-8',
    };
  }
  if (countControls(body) > 0.1 * body.length) return { why: 'binary data (control bytes throughout), not text' };
  return { text };
}

// Controls are counted four bytes at a time: a 32-bit word per step, its bytes looked at one by one
// only where the word holds one below 0x20. Over a whole file that is several times faster than a
// byte loop or a regular expression's character class over the decoded text, either of which cost
// more than decoding it.
const ONES = 0x01010101;
const HIGHS = 0x80808080;

/** Whether a word holds a byte below `n` (n ≤ 128): exact for "any" (Bit Twiddling Hacks' hasless). */
const hasLess = (word: number, n: number) => ((word - ONES * n) & ~word & HIGHS) !== 0;

/** The bytes as whole 32-bit words (where their offset allows), and the bytes before and after them. */
function words(bytes: Uint8Array): { head: number; words: Uint32Array; tail: number } {
  const head = Math.min(bytes.length, (4 - (bytes.byteOffset % 4)) % 4);
  const count = (bytes.length - head) >> 2;
  return {
    head,
    // No words: none made at an offset that may not be a whole word's (a short view off a boundary).
    words: count > 0 ? new Uint32Array(bytes.buffer, bytes.byteOffset + head, count) : new Uint32Array(0),
    tail: head + count * 4,
  };
}

/** A control character other than tab, line feed, page break, carriage return and ESC. */
const isControl = (b: number) => b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d && b !== 0x1b;

/** How many bytes are controls other than whitespace and ESC (rare in text, common in binary data). */
function countControls(bytes: Uint8Array): number {
  const { head, words: body, tail } = words(bytes);
  let controls = 0;
  for (let k = 0; k < head; k++) if (isControl(bytes[k]!)) controls++;
  for (let k = 0; k < body.length; k++) {
    if (!hasLess(body[k]!, 0x20)) continue;
    for (let b = head + 4 * k, end = b + 4; b < end; b++) if (isControl(bytes[b]!)) controls++;
  }
  for (let k = tail; k < bytes.length; k++) if (isControl(bytes[k]!)) controls++;
  return controls;
}

/** How much of a file `looksLikeText` reads. */
export const TEXT_SNIFF_BYTES = 64 * 1024;

/**
 * Whether the bytes look like text the readers decode, judged from their first 64 KiB (format
 * detection calls it on a prefix; `decodeText` still checks every byte).
 */
export function looksLikeText(bytes: Uint8Array): boolean {
  const complete = bytes.length <= TEXT_SNIFF_BYTES;
  return 'text' in checkText(complete ? bytes : bytes.subarray(0, TEXT_SNIFF_BYTES), complete);
}

/** The text of UTF-8 or BOM-marked UTF-16 bytes (the BOM dropped), or ReadRefused UNSUPPORTED_TYPE. */
export function decodeText(bytes: Uint8Array): string {
  const complete = bytes.length <= TEXT_SNIFF_BYTES;
  const checked = checkText(complete ? bytes : bytes.subarray(0, TEXT_SNIFF_BYTES), complete);
  if ('why' in checked) throw refusal(checked.why);
  const { encoding, bom } = bomOf(bytes);
  // A whole file is decoded by its check already.
  let text = checked.text;
  if (!complete) {
    try {
      // ignoreBOM: the BOM is removed here, and a second one is the text's own character.
      text = new TextDecoder(encoding, { fatal: true, ignoreBOM: true }).decode(bytes.subarray(bom));
    } catch {
      throw refusal(
        encoding === 'utf-8'
          ? 'not valid UTF-8 past its start: save it as UTF-8'
          : `not valid ${encoding.toUpperCase()} past its start (damaged text)`,
      );
    }
  }
  // The start was text; binary data further on (a NUL is valid UTF-8) is still not. (The check
  // looked at every byte of a whole UTF-8 file already.)
  const nul = encoding !== 'utf-8' ? text.indexOf('\0') : complete ? -1 : bytes.indexOf(0, bom);
  if (nul >= 0)
    throw refusal(
      `binary data past its start (a NUL ${encoding === 'utf-8' ? `byte at offset ${nul}` : `character at ${nul}`}), not text`,
    );
  return text;
}

const refusal = (why: string) => new ReadRefused('UNSUPPORTED_TYPE', `The file is ${why}; it cannot be read as text.`);

/** ReadRefused TOO_COMPLEX when a document's text is longer than the reader reads. */
export function checkTextLength(chars: number, limits: ReaderLimits): void {
  if (chars > limits.maxTextChars)
    throw new ReadRefused(
      'TOO_COMPLEX',
      `The document has ${chars} characters of text, more than the ${limits.maxTextChars} read.`,
    );
}

/** `decodeText` within the reader's bounds: bytes that cannot fit `maxTextChars` are not decoded. */
export function decodeDocument(bytes: Uint8Array, limits: ReaderLimits): string {
  // A character takes at most 4 bytes (UTF-8) and at least 1.
  if (bytes.length > 4 * limits.maxTextChars + 4) checkTextLength(Math.ceil(bytes.length / 4), limits);
  const text = decodeText(bytes);
  checkTextLength(text.length, limits);
  return text;
}
