import { chatTitle, titleFromWords } from '#shared/chats/conversations/chat-title.ts';
import { createOfflineProvider } from '#shared/ai/offline-provider.ts';

// Titles from the first exchange: offline, the prompt's first words, cleaned of markup.

const offline = createOfflineProvider({ maxInputs: 16, maxTokens: 8_000 });

test('a title is the first six words, markup, quotes and a final stop left out', () => {
  expect(titleFromWords('  **What** do "owls" eat in the winter months?')).toBe('What do owls eat in the');
  expect(titleFromWords('Short one.')).toBe('Short one');
  expect(titleFromWords('# ` *')).toBe('');
  expect(titleFromWords('日本語の文章について教えてください')).toBe('日本語の文章について教えてください');
  expect([...titleFromWords('x'.repeat(500))]).toHaveLength(60);
});

test('offline, the title is the prompt’s first words and costs no tokens', async () => {
  const made = await chatTitle(offline, { prompt: 'Explain trace trees to me, please', reply: 'No model.' });
  expect(made).toEqual({ title: 'Explain trace trees to me, please' });
  expect(await chatTitle(offline, { prompt: '```', reply: '' })).toBeUndefined();
});
