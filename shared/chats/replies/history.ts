import type { ChatTurn } from '../../ai/types.ts';
import { estimateMessageTokens } from '../../ai/tokens.ts';
import type { Message } from '../schemas.ts';

// The conversation a prompt is sent with: the newest messages that fit the token budget,
// oldest first. Messages are taken newest first and the walk stops at the first one that does
// not fit, so older messages are the ones dropped and the kept history has no gaps. Only the
// dialogue counts: file attachments and stored system notes are not turns.

function toTurn(message: Message): ChatTurn | undefined {
  if (message.type !== 'message') return undefined;
  if (message.messageType === 'user') return { role: 'user', content: message.message };
  if (message.messageType === 'ai')
    return message.message ? { role: 'assistant', content: message.message } : undefined;
  return undefined;
}

/** Newest-first messages in, the turns that fit `budgetTokens` out (oldest first). */
export async function fitHistory(
  newestFirst: AsyncIterable<Message> | Iterable<Message>,
  budgetTokens: number,
): Promise<ChatTurn[]> {
  const kept: ChatTurn[] = [];
  let used = 0;
  if (budgetTokens <= 0) return kept;
  for await (const message of newestFirst) {
    const turn = toTurn(message);
    if (!turn) continue;
    const cost = estimateMessageTokens(turn.content);
    if (used + cost > budgetTokens) break;
    used += cost;
    kept.push(turn);
  }
  return kept.reverse();
}
