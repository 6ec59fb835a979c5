// A cheap, conservative token estimate for budgets (chat history, embedding batches).
// Tokenizers (gpt-tokenizer) would add about a megabyte to every API bundle, which must stay
// small; English text averages about 4 characters per token with OpenAI's tokenizers, so
// counting 3 over-estimates on purpose: a budget computed with it is never exceeded in practice.

const CHARS_PER_TOKEN = 3;
/** Per-message overhead of the chat format (role and separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

export function estimateMessageTokens(text: string): number {
  return estimateTokens(text) + MESSAGE_OVERHEAD_TOKENS;
}
