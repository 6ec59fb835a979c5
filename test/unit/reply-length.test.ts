import { MAX_STORED_REPLY_BYTES, ReplyLength } from '#shared/chats/replies/reply-length.ts';

// What a reply keeps of what the model sends (the gateway-level cases are in
// test/security/reply-length.test.ts): within its tokens, and within its table item whatever
// REPLY_MAX_TOKENS allows.

test('a whole reply is cut at 16 characters a token, a delta reply at the same place', () => {
  expect(new ReplyLength(4).take('a'.repeat(100))).toBe('a'.repeat(64));
  const length = new ReplyLength(4);
  const kept = ['abcdefghij'.repeat(3), 'abcdefghij'.repeat(3), 'abcdefghij'].map((d) => length.take(d)).join('');
  expect(kept).toBe('abcdefghij'.repeat(7).slice(0, 64));
  expect(length.full).toBe(true);
  expect(length.take('more')).toBe('');
});

test('a reply that fits is kept whole and the length is not reached', () => {
  const length = new ReplyLength(1_024);
  expect(length.take('A short answer.')).toBe('A short answer.');
  expect(length.full).toBe(false);
});

test('with a large token allowance, the text and its delta offsets stay within the stored item', () => {
  const whole = new ReplyLength(100_000).take('é'.repeat(500_000)); // 1 MB in UTF-8
  expect(Buffer.byteLength(whole)).toBeLessThanOrEqual(MAX_STORED_REPLY_BYTES);
  expect(Buffer.byteLength(whole)).toBeGreaterThan(MAX_STORED_REPLY_BYTES - 16);

  const streamed = new ReplyLength(100_000);
  let bytes = 0;
  let deltas = 0;
  while (!streamed.full) {
    const kept = streamed.take('ab');
    bytes += Buffer.byteLength(kept);
    deltas += 1;
  }
  expect(bytes + deltas * 8).toBeLessThanOrEqual(MAX_STORED_REPLY_BYTES + 8);
});

test('a cut never splits a pair of surrogates', () => {
  const kept = new ReplyLength(1).take(`${'a'.repeat(15)}😀tail`);
  expect(kept).toBe('a'.repeat(15));
});
