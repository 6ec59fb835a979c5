import { normalizeText } from '../sentences.ts';
import type { LayoutItem } from './layout/lines.ts';
import { type PageBlock, readPageLayout } from './layout/page-layout.ts';
import { judgePageText, type TextVerdict } from './text-quality.ts';

// Per-page text in → normalised text out, for text layers (pdf.js) and OCR alike.
//
// - Right-to-left lines: producers draw Arabic and Hebrew in visual order (the last word of the
//   sentence leftmost), and pdf.js returns the text items in drawing order, each already in
//   logical order inside. A line whose letters are mostly right-to-left is therefore put back in
//   logical order by the items' positions (rightmost first).
// - NFKC: Arabic presentation forms (the shaped glyphs producers map to) become the letters a
//   user types, ligatures (ﬁ) and full-width forms become plain letters.
// - A word hyphenated at a line end is one word again ("inter-\npreter" → "interpreter").
// - Control characters go; whitespace runs become single spaces.

// Strong right-to-left letters: Hebrew, Arabic (with its supplements and presentation forms), Syriac, Thaana, NKo.
const RTL_CLASS = '[\\u0590-\\u08ff\\ufb1d-\\ufdff\\ufe70-\\ufefc]';
const RTL = new RegExp(RTL_CLASS, 'gu');
const HAS_RTL = new RegExp(RTL_CLASS, 'u');
const LTR = /[A-Za-z\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/gu;

const count = (s: string, re: RegExp) => s.match(re)?.length ?? 0;

/** The raw text of a page, lines in logical order (not yet normalised). */
export function joinItems(items: readonly LayoutItem[]): string {
  let out = '';
  let line: LayoutItem[] = [];
  const flush = (eol: boolean) => {
    out += joinLine(line) + (eol ? '\n' : '');
    line = [];
  };
  for (const item of items) {
    line.push(item);
    if (item.hasEOL) flush(true);
  }
  flush(false);
  return out;
}

export function joinLine(line: LayoutItem[]): string {
  const text = line.map((i) => i.str).join('');
  if (!line.length || !HAS_RTL.test(text)) return text;
  if (count(text, RTL) <= count(text, LTR) || line.some((i) => !i.transform)) return text;
  // Rightmost first; items keep their own (logical) order inside.
  const sorted = line.filter((i) => i.str).sort((a, b) => b.transform![4]! - a.transform![4]!);
  let joined = '';
  for (let k = 0; k < sorted.length; k++) {
    const cur = sorted[k]!;
    const prev = sorted[k - 1];
    if (prev) {
      // A gap between the previous (right) item's start and this one's end is a word space.
      const gap = prev.transform![4]! - (cur.transform![4]! + (cur.width ?? 0));
      const size = Math.abs(cur.height ?? cur.transform![3] ?? 10) || 10;
      if (gap > size * 0.15 && !/\s$/.test(joined) && !/^\s/.test(cur.str)) joined += ' ';
    }
    joined += cur.str;
  }
  return joined;
}

// C0/C1 controls other than whitespace, and the noncharacters a broken font map can produce.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's job
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]/g;

/** Normalised one-line text of a page from its raw text. */
export function normalisePageText(raw: string): string {
  const text = raw
    .normalize('NFKC')
    .replace(CONTROLS, ' ')
    // Tatweel (kashida) stretches Arabic words for layout; it is not part of the word.
    .replace(/\u0640/g, '')
    .replace(/(\p{Ll})-\n(?=\p{Ll})/gu, '$1');
  return normalizeText(text);
}

interface PageText {
  /** Normalised text ('' when the page has none or it is unusable). */
  text: string;
  verdict: TextVerdict;
  /** Its headings and tables, when it has any (layout/page-layout.ts); `text` is then made of them. */
  blocks?: PageBlock[];
}

/** A page's text items → the quality verdict on the raw text, and the normalised text when usable. */
export function readPageText(items: readonly LayoutItem[]): PageText {
  const raw = joinItems(items);
  const verdict = judgePageText(raw);
  if (!verdict.usable) return { text: '', verdict };
  const layout = readPageLayout(items);
  return layout ? { text: layout.text, verdict, blocks: layout.blocks } : { text: normalisePageText(raw), verdict };
}
