import { estimateUsage } from '../../ai/prompt.ts';
import { estimateTokens } from '../../ai/tokens.ts';
import type { ChatInput } from '../../ai/types.ts';
import { REWRITE_MAX_CHARS, rewriteCostBound } from './retrieval-query.ts';

// What a reply may cost, reserved against the daily budget before anything is stored
// (docs/DECISIONS.md "Whatever is sent to a model is charged").

/** Tokens a passage's delimiters and label add besides its text (`<passage n=… source=…>`). */
const PASSAGE_OVERHEAD_TOKENS = 40;

/**
 * The most a reply can cost: the prompt as it will be sent (system message, history, prompt),
 * the longest reply and, in a file chat, what is not known before retrieval at its most: k
 * passages of a chunk's size, the follow-up rewrite and the query's embedding.
 */
export function replyCostBound(
  input: Omit<ChatInput, 'sources'>,
  fileChat: { k: number; chunkTokens: number; rewrite: boolean } | undefined,
): number {
  const sent = estimateUsage({ ...input, sources: [] }, '').promptTokens + input.maxTokens;
  if (!fileChat) return sent;
  // Chunks are cut by the model's tokenizer (about four characters a token in English); the
  // estimate counts three characters a token, so a chunk's text estimates at about 4/3 of its size.
  const passages = fileChat.k * (Math.ceil((fileChat.chunkTokens * 4) / 3) + PASSAGE_OVERHEAD_TOKENS);
  const rewrite = fileChat.rewrite ? rewriteCostBound(input.history, input.prompt) : 0;
  // The query embedded: the prompt, the previous question joined to it, or a rewrite of at most REWRITE_MAX_CHARS.
  const previous = input.history.filter((t) => t.role === 'user').at(-1)?.content ?? '';
  const queryEmbedding = Math.max(estimateTokens(`${previous}\n${input.prompt}`), Math.ceil(REWRITE_MAX_CHARS / 3));
  return sent + passages + rewrite + queryEmbedding;
}
