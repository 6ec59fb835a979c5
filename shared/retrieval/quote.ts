import { words } from '../ai/lexical-embedding.ts';
import { splitSentences } from '../sentences.ts';
import { STOP_WORDS } from './terms.ts';

// The quote of a cited chunk: the sentence sharing the most words with the prompt, cut to at
// most `maxChars` around its first shared word when it is long. Always a substring of the
// chunk's stored text, so a client can find it verbatim in the source. Sentences are also cut at
// `cuts` (where the chunk's verbatim stretches of page text start), so a quote lies on one page.

const QUOTE_MAX_CHARS = 300;

interface Quote {
  quote: string;
  /** Offset of the quote in the chunk text. */
  offset: number;
}

export function pickQuote(text: string, prompt: string, maxChars = QUOTE_MAX_CHARS, cuts: number[] = []): Quote {
  const terms = new Set(words(prompt).filter((w) => !STOP_WORDS.has(w)));
  let best: Quote & { score: number } = { quote: '', offset: 0, score: -1 };
  const bounds = [...new Set([0, ...cuts.filter((c) => c > 0 && c < text.length), text.length])].sort((a, b) => a - b);
  for (let b = 0; b + 1 < bounds.length; b++) {
    const piece = text.slice(bounds[b], bounds[b + 1]);
    let from = 0;
    for (const sentence of splitSentences(piece.trim())) {
      const at = piece.indexOf(sentence, from);
      if (at < 0) continue;
      from = at + sentence.length;
      const shared = new Set(words(sentence).filter((w) => terms.has(w)));
      if (shared.size > best.score) best = { quote: sentence, offset: bounds[b]! + at, score: shared.size };
    }
  }
  if (best.score < 0) return { quote: text.slice(0, maxChars), offset: 0 };
  if (best.quote.length <= maxChars) return { quote: best.quote, offset: best.offset };
  return trimAround(text, best, terms, maxChars);
}

/** A window of at most maxChars inside the sentence, starting near its first shared word, on word boundaries. */
function trimAround(_text: string, s: Quote, terms: Set<string>, maxChars: number): Quote {
  const sentence = s.quote;
  const lower = sentence.toLowerCase();
  let first = sentence.length;
  for (const t of terms) {
    const at = lower.indexOf(t);
    if (at >= 0 && at < first) first = at;
  }
  if (first === sentence.length) first = 0;
  let start = Math.max(0, Math.min(first - 40, sentence.length - maxChars));
  if (start > 0) {
    const space = sentence.indexOf(' ', start);
    start = space >= 0 && space - start < 30 ? space + 1 : start;
  }
  let end = Math.min(sentence.length, start + maxChars);
  if (end < sentence.length) {
    const space = sentence.lastIndexOf(' ', end);
    if (space > start + maxChars / 2) end = space;
  }
  const quote = sentence.slice(start, end);
  return { quote, offset: s.offset + start };
}

/** The page of an offset in a chunk, from its `[offset, page]` starts. */
export function pageAt(pageStarts: [number, number][], offset: number, fallback: number): number {
  let page = fallback;
  for (const [at, p] of pageStarts) {
    if (at <= offset) page = p;
    else break;
  }
  return page;
}
