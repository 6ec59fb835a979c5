import { distinctTerms, MAX_TERM_CHARS, snippet, tokens } from '#shared/chats/search/search-tokenizer.ts';
import { formatRef, parseRef } from '#shared/chats/search/search-index.ts';

// The search tokenizer: words in any script, folded; CJK as bigrams; offsets for snippets.

test('Latin words are lower-cased and lose their accents; one-letter words are skipped', () => {
  expect(distinctTerms('Élan, CAFÉ au lait: a café!')).toEqual(['elan', 'cafe', 'au', 'lait']);
  expect(distinctTerms('Tromsø Straße Łódź Æsir')).toEqual(['tromso', 'strasse', 'lodz', 'aesir']);
  expect(distinctTerms('I x 7 go')).toEqual(['go']);
});

test('other scripts with spaces are words too, and digits count', () => {
  expect(distinctTerms('Привет, МИР 2026 Ελλάδα')).toEqual(['привет', 'мир', '2026', 'ελλαδα']);
});

test('CJK runs are cut into overlapping bigrams, a lone character is its own term', () => {
  expect(distinctTerms('日本語の文章')).toEqual(['日本', '本語', '語の', 'の文', '文章']);
  expect(distinctTerms('猫')).toEqual(['猫']);
  expect(distinctTerms('한국어 문장')).toEqual(['한국', '국어', '문장']);
  // Full-width forms are the same characters (NFKC), mixed words split by script.
  expect(distinctTerms('ＡＩ日本')).toEqual(['ai', '日本']);
});

test('tokens carry the offset of their word in the original text', () => {
  expect([...tokens('Go 日本語 Élan')]).toEqual([
    { term: 'go', offset: 0 },
    { term: '日本', offset: 3 },
    { term: '本語', offset: 4 },
    { term: 'elan', offset: 7 },
  ]);
});

test('long words are cut, repeats counted once, and the number of terms capped', () => {
  expect(distinctTerms('x'.repeat(500))).toEqual(['x'.repeat(MAX_TERM_CHARS)]);
  expect(distinctTerms('b a b c b')).toEqual([]);
  expect(distinctTerms('one two one three four', 3)).toEqual(['one', 'two', 'three']);
  expect(distinctTerms('!!! --- ...')).toEqual([]);
});

test('a hostile text is cut in one pass: one term per bigram or word, each word read once, in order', () => {
  const text = `${'日本'.repeat(50_000)} ${'word '.repeat(50_000)}`;
  expect(distinctTerms(text, 256)).toEqual(['日本', '本日', 'word']);
  // Linear by construction, counted rather than timed (speed belongs in bench/): a run of n
  // bigram characters gives n - 1 terms, every other word one, and no offset is visited twice.
  const offsets = [...tokens(text)].map((t) => t.offset);
  expect(offsets).toHaveLength(100_000 - 1 + 50_000);
  expect(offsets.every((at, i) => i === 0 || at > offsets[i - 1]!)).toBe(true);
});

test('a snippet is the text around the first match, marked where cut', () => {
  expect(snippet('short text', new Set(['text']))).toBe('short text');
  const long = `${'filler words here '.repeat(20)}the needle is here ${'more words after '.repeat(20)}`;
  const s = snippet(long, new Set(['needle']));
  expect(s.length).toBeLessThanOrEqual(162);
  expect(s).toContain('needle');
  expect(s.startsWith('…')).toBe(true);
  expect(s.endsWith('…')).toBe(true);
  expect(snippet(long, new Set(['absent'])).startsWith('filler')).toBe(true);
});

test('refs round-trip; a name ref has no message id', () => {
  const ref = { timestamp: '2026-11-24T09:30:00.000Z', chatId: 'c1', sequenceNumber: 7, messageId: 'm1' };
  expect(parseRef(formatRef(ref))).toEqual(ref);
  expect(parseRef(formatRef({ timestamp: ref.timestamp, chatId: 'c1', sequenceNumber: 0 }))).toEqual({
    timestamp: ref.timestamp,
    chatId: 'c1',
    sequenceNumber: 0,
  });
  expect(parseRef('garbage')).toBeUndefined();
});
