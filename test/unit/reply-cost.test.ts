import { AiProviderError } from '#shared/ai/errors.ts';
import { estimateUsage, unreportedUsage } from '#shared/ai/prompt.ts';
import type { ChatInput } from '#shared/ai/types.ts';
import { replyCostBound } from '#shared/chats/replies/reply-cost.ts';

// What a reply reserves against the daily budget, and what a model call that failed still costs.

const input: ChatInput = {
  system: 'You are a helpful assistant.',
  history: [
    { role: 'user', content: 'lorem ipsum '.repeat(200) },
    { role: 'assistant', content: 'Noted.' },
  ],
  prompt: 'And now?',
  maxTokens: 100,
};
const promptTokens = estimateUsage(input, '').promptTokens;

describe('replyCostBound', () => {
  test('a text chat: the whole prompt as sent (history included) and the longest reply', () => {
    expect(replyCostBound(input, undefined)).toBe(promptTokens + 100);
    expect(replyCostBound({ ...input, history: [] }, undefined)).toBeLessThan(promptTokens + 100 - 800);
  });

  test('a file chat adds k passages, the rewrite and the query embedding at their most', () => {
    const fileChat = { ...input, fileChat: true };
    const without = replyCostBound(fileChat, { k: 0, chunkTokens: 800, rewrite: false });
    expect(without).toBeGreaterThan(estimateUsage(fileChat, '').promptTokens + 100); // the query embedding
    const passages = replyCostBound(fileChat, { k: 6, chunkTokens: 800, rewrite: false }) - without;
    expect(passages).toBeGreaterThanOrEqual(6 * 800);
    expect(replyCostBound(fileChat, { k: 6, chunkTokens: 800, rewrite: true })).toBeGreaterThan(without + passages);
  });
});

describe('unreportedUsage', () => {
  test('a call cut, timed out or stopped pays the prompt it was sent and the text it gave', () => {
    expect(unreportedUsage(input, '', new Error('socket hang up')).totalTokens).toBe(promptTokens);
    expect(unreportedUsage(input, '', new AiProviderError('timeout', 'no answer')).totalTokens).toBe(promptTokens);
    expect(unreportedUsage(input, 'Partial', undefined).totalTokens).toBe(estimateUsage(input, 'Partial').totalTokens);
  });

  test('a request the provider refused with an error status read nothing: it costs nothing', () => {
    expect(unreportedUsage(input, '', new AiProviderError('rate-limited', 'busy', { status: 429 })).totalTokens).toBe(
      0,
    );
    expect(unreportedUsage(input, '', new AiProviderError('failed', 'bad request', { status: 400 })).totalTokens).toBe(
      0,
    );
  });
});
