import fc from 'fast-check';
import { fitHistory } from '#shared/chats/replies/history.ts';
import type { Message } from '#shared/chats/schemas.ts';
import { estimateMessageTokens, estimateTokens } from '#shared/ai/tokens.ts';

// The token budget of the history sent with a prompt: newest kept, oldest dropped, no gaps.

let seq = 0;
const msg = (
  message: string,
  messageType: Message['messageType'] = 'user',
  type: Message['type'] = 'message',
): Message => ({
  id: `m${++seq}`,
  chatId: 'c',
  userId: 'u',
  message,
  messageType,
  type,
  sequenceNumber: seq,
  timestamp: new Date(0).toISOString(),
});

test('keeps the newest messages that fit, oldest first, and drops the older ones', async () => {
  const oldest = msg('a'.repeat(30), 'user'); // 10 + 4 tokens each
  const middle = msg('b'.repeat(30), 'ai');
  const newest = msg('c'.repeat(30), 'user');
  const newestFirst = [newest, middle, oldest];
  expect(await fitHistory(newestFirst, 28)).toEqual([
    { role: 'assistant', content: middle.message },
    { role: 'user', content: newest.message },
  ]);
  expect(await fitHistory(newestFirst, 42)).toHaveLength(3);
  expect(await fitHistory(newestFirst, 13)).toEqual([]);
  expect(await fitHistory(newestFirst, 0)).toEqual([]);
});

test('stops at the first message that does not fit (no gaps), even if an older one would', async () => {
  const small = msg('old and short', 'user');
  const big = msg('x'.repeat(3000), 'ai');
  const latest = msg('latest', 'user');
  expect(await fitHistory([latest, big, small], 100)).toEqual([{ role: 'user', content: 'latest' }]);
});

test('file attachments, system notes and empty replies are not turns', async () => {
  const turns = await fitHistory(
    [msg('question'), msg('report.pdf', 'user', 'file'), msg('note', 'system'), msg('', 'ai'), msg('answer', 'ai')],
    1000,
  );
  expect(turns).toEqual([
    { role: 'assistant', content: 'answer' },
    { role: 'user', content: 'question' },
  ]);
});

test('reads an async source only as far as the budget reaches', async () => {
  let read = 0;
  async function* source() {
    for (let i = 0; i < 1000; i++) {
      read++;
      yield msg('y'.repeat(300));
    }
  }
  const turns = await fitHistory(source(), 500);
  expect(turns).toHaveLength(Math.floor(500 / estimateMessageTokens('y'.repeat(300))));
  expect(read).toBe(turns.length + 1);
});

test('property: the result is the newest suffix within budget, and one more message would not fit', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.string({ minLength: 1, maxLength: 200 }), { maxLength: 30 }),
      fc.integer({ min: 0, max: 2000 }),
      async (texts, budget) => {
        const chronological = texts.map((t, i) => msg(t, i % 2 ? 'ai' : 'user'));
        const turns = await fitHistory([...chronological].reverse(), budget);
        const cost = turns.reduce((n, t) => n + estimateMessageTokens(t.content), 0);
        expect(cost).toBeLessThanOrEqual(budget);
        expect(turns.map((t) => t.content)).toEqual(texts.slice(texts.length - turns.length));
        if (turns.length < texts.length) {
          const next = texts[texts.length - turns.length - 1]!;
          expect(cost + estimateMessageTokens(next)).toBeGreaterThan(budget);
        }
      },
    ),
  );
});

test('the estimate is conservative: about 3 characters per token', () => {
  expect(estimateTokens('')).toBe(0);
  expect(estimateTokens('abc')).toBe(1);
  expect(estimateTokens('abcd')).toBe(2);
  expect(estimateMessageTokens('abc')).toBe(5);
});
