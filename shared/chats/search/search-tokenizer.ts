// The search tokenizer (docs/DECISIONS.md, Chat search): the same function cuts stored text and
// queries into terms, so a query term is found exactly where the text produced it.
//   - A word is a run of letters, marks and digits, in any script.
//   - Scripts written without spaces (Han, Hiragana, Katakana) and Hangul are cut into overlapping
//     character bigrams (日本語 → 日本, 本語); a lone character is its own term.
//   - Other words are folded: lower-cased, NFKD, combining marks removed (Élan → elan, ø → o); words of
//     one character are skipped (a, I, 1) and long ones cut to MAX_TERM_CHARS.

/** Longer words are cut to this many characters (a pasted hash or URL is one long "word"). */
export const MAX_TERM_CHARS = 24;

const WORD = /[\p{L}\p{M}\p{N}]+/gu;
/** Characters indexed as bigrams; a run of them inside a word is cut apart from the rest. */
const BIGRAM_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;

/** A term and where its word starts in the original text (UTF-16 offset, for snippets). */
export interface Token {
  term: string;
  offset: number;
}

/** Latin letters NFKD does not take apart (no combining mark to remove). */
const UNSPLIT: Record<string, string> = { ø: 'o', đ: 'd', ł: 'l', ß: 'ss', æ: 'ae', œ: 'oe', ı: 'i', þ: 'th' };

const fold = (word: string) =>
  word
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[øđłßæœıþ]/g, (c) => UNSPLIT[c]!)
    .normalize('NFC');

function* latinTerms(word: string, offset: number): Generator<Token> {
  const term = [...fold(word)].slice(0, MAX_TERM_CHARS).join('');
  if ([...term].length >= 2) yield { term, offset };
}

function* bigrams(run: string, offset: number): Generator<Token> {
  const chars = [...run.normalize('NFKC')];
  if (chars.length === 1) {
    yield { term: chars[0]!, offset };
    return;
  }
  let at = offset;
  for (let i = 0; i + 1 < chars.length; i++) {
    yield { term: chars[i]! + chars[i + 1]!, offset: at };
    at += chars[i]!.length;
  }
}

/** Every term of the text in order, repeats included. */
export function* tokens(text: string): Generator<Token> {
  for (const word of text.matchAll(WORD)) {
    const start = word.index;
    let last = 0;
    for (const run of word[0].matchAll(BIGRAM_SCRIPT)) {
      if (run.index > last) yield* latinTerms(word[0].slice(last, run.index), start + last);
      yield* bigrams(run[0], start + run.index);
      last = run.index + run[0].length;
    }
    if (last < word[0].length) yield* latinTerms(word[0].slice(last), start + last);
  }
}

/** The distinct terms of the text in order of first appearance, at most `max`. */
export function distinctTerms(text: string, max = Number.POSITIVE_INFINITY): string[] {
  const seen = new Set<string>();
  for (const { term } of tokens(text)) {
    if (seen.size >= max) break;
    seen.add(term);
  }
  return [...seen];
}

/** Characters of a search hit's snippet. */
export const SNIPPET_CHARS = 160;

/**
 * A window of the text around the first place one of `terms` occurs, with "…" where it was cut;
 * the start of the text when none does.
 */
export function snippet(text: string, terms: ReadonlySet<string>, max = SNIPPET_CHARS): string {
  const flat = text.replace(/\s+/g, ' ');
  if (flat.length <= max) return flat.trim();
  let at = 0;
  for (const t of tokens(flat)) {
    if (terms.has(t.term)) {
      at = t.offset;
      break;
    }
  }
  let start = Math.max(0, Math.min(at - Math.floor(max / 3), flat.length - max));
  // Start on a word where one begins near the cut, never inside a surrogate pair.
  const space = flat.lastIndexOf(' ', start);
  if (space >= 0 && start - space < 20) start = space + 1;
  if (/[\uDC00-\uDFFF]/.test(flat[start] ?? '')) start++;
  let end = Math.min(flat.length, start + max);
  if (/[\uDC00-\uDFFF]/.test(flat[end] ?? '')) end--;
  return `${start > 0 ? '…' : ''}${flat.slice(start, end).trim()}${end < flat.length ? '…' : ''}`;
}
