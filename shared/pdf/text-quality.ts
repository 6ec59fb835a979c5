import { PermanentFailure } from '../files/failures.ts';

// Is a page's extracted text usable? PDFs whose fonts carry no Unicode map give pdf.js glyph ids
// instead of characters: control characters, private-use code points, U+FFFD, or letters that
// spell nothing. Such text must not be chunked, embedded and quoted back as if it were the page:
// the page is read by OCR instead (or reported unreadable). One pass over the code points of the
// page, counting classes; no allocation per character, so it costs a fraction of extraction.

export type TextVerdict =
  | { usable: true }
  | {
      usable: false;
      /**
       * `blank`: no text, and nothing drawn either (no OCR needed); `undrawable`: the page could not be
       * drawn for OCR (an image costlier than the drawing child affords).
       */
      reason:
        | 'empty'
        | 'blank'
        | 'control'
        | 'private-use'
        | 'replacement'
        | 'glyph-names'
        | 'implausible'
        | 'undrawable';
    };

/** Below this many letters or digits a page has no text worth keeping (page numbers, stray marks). */
const MIN_ALNUM = 3;
/** Share of the visible characters that may be control, private-use or U+FFFD before the page is garbage. */
const MAX_BAD_SHARE = 0.05;
/** Latin text needs vowels: real prose in languages written in Latin letters has 25–50 %. */
const MIN_VOWEL_SHARE = 0.12;
const MAX_VOWEL_SHARE = 0.75;
/** Latin letters needed before the vowel test means anything. */
const MIN_LATIN_FOR_VOWELS = 40;
/** Share of visible characters that must be letters, digits or marks (the rest: punctuation, symbols). */
const MIN_ALNUM_SHARE = 0.45;
/** Glyph-name fallbacks some producers leave in the text: "/g123", "(cid:12)", "gid00042". */
const GLYPH_NAMES = /(?:\(cid:\d+\)|\/g\d+|\bgid\d{2,}\b|\bglyph\d+\b)/g;

const isVowel = (c: number) => {
  const l = c | 0x20; // ASCII lower case
  return l === 0x61 || l === 0x65 || l === 0x69 || l === 0x6f || l === 0x75 || l === 0x79;
};

/** Judges one page's text (as extracted, before normalisation). */
export function judgePageText(text: string): TextVerdict {
  let visible = 0;
  let alnum = 0;
  let control = 0;
  let privateUse = 0;
  let replacement = 0;
  let latin = 0;
  let vowels = 0;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      c = text.codePointAt(i)!;
      i++;
    }
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0xa0) continue;
    visible++;
    if (c < 0x80) {
      if (c < 0x20 || c === 0x7f) control++;
      else if ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) {
        alnum++;
        latin++;
        if (isVowel(c)) vowels++;
      } else if (c >= 0x30 && c <= 0x39) alnum++;
      continue;
    }
    if (c <= 0x9f) control++;
    else if ((c >= 0xe000 && c <= 0xf8ff) || c >= 0xf0000) privateUse++;
    else if (c === 0xfffd) replacement++;
    else if (c >= 0x2000 && c <= 0x2bff)
      continue; // punctuation, symbols, arrows, math, boxes
    else if (c >= 0x3000 && c <= 0x303f)
      continue; // CJK punctuation
    else if (c >= 0xfe10 && c <= 0xfe6f && !(c >= 0xfe20 && c <= 0xfe2f))
      continue; // CJK compatibility punctuation
    else if (c >= 0xff00 && c <= 0xff0f)
      continue; // full-width punctuation
    else {
      alnum++; // a letter, digit or mark of some script (a rough class, enough to tell text from noise)
      if (c >= 0xc0 && c <= 0x24f) latin++;
    }
  }
  if (alnum < MIN_ALNUM && control + privateUse + replacement === 0) return { usable: false, reason: 'empty' };
  if (visible === 0) return { usable: false, reason: 'empty' };
  const bad = (n: number) => n / visible > MAX_BAD_SHARE;
  if (bad(control)) return { usable: false, reason: 'control' };
  if (bad(privateUse)) return { usable: false, reason: 'private-use' };
  if (bad(replacement)) return { usable: false, reason: 'replacement' };
  if (alnum < MIN_ALNUM) return { usable: false, reason: 'empty' };
  if (text.includes('/g') || text.includes('cid:') || text.includes('gid') || text.includes('glyph')) {
    const names = text.match(GLYPH_NAMES)?.length ?? 0;
    if (names >= 3 && names * 4 > text.split(/\s+/).length) return { usable: false, reason: 'glyph-names' };
  }
  if (alnum / visible < MIN_ALNUM_SHARE) return { usable: false, reason: 'implausible' };
  if (latin >= MIN_LATIN_FOR_VOWELS && latin * 2 > alnum) {
    const share = vowels / latin;
    if (share < MIN_VOWEL_SHARE || share > MAX_VOWEL_SHARE) return { usable: false, reason: 'implausible' };
  }
  return { usable: true };
}

/** The failure of a document none of whose pages has usable text (after OCR, when it is on). */
export function noUsableText(garbledPages: number, ocrEnabled: boolean, undrawablePages = 0): PermanentFailure {
  if (undrawablePages > 0 && garbledPages === undrawablePages) {
    return new PermanentFailure(
      'UNREADABLE_TEXT',
      `The PDF's text cannot be read: ${undrawablePages} page(s) without a text layer hold images too large to draw within the service's memory, and no page has text`,
    );
  }
  if (garbledPages > 0) {
    return new PermanentFailure(
      'UNREADABLE_TEXT',
      ocrEnabled
        ? `The PDF's text cannot be read: ${garbledPages} page(s) carry text that maps to no characters, and OCR recognised none`
        : `The PDF's text cannot be read: ${garbledPages} page(s) carry text that maps to no characters (OCR is off)`,
    );
  }
  return new PermanentFailure(
    'NO_TEXT_LAYER',
    ocrEnabled
      ? 'The PDF has no text layer and OCR recognised no text in it'
      : 'The PDF has no text layer (a scanned document?) and OCR is off',
  );
}
