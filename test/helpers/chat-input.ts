import type { ChatTurn } from '#shared/ai/types.ts';

// The history a provider test sends before its prompt: one exchange, so the request shows a
// user turn and an assistant turn alternating ahead of the new user turn.

export const GREETING: ChatTurn[] = [
  { role: 'user', content: 'Hi' },
  { role: 'assistant', content: 'Hello.' },
];
