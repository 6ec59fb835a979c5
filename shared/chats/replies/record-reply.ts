import { isoNow } from '../../clock.ts';
import type { Usage } from '../../ai/types.ts';
import { asError } from '../../errors.ts';
import { logger } from '../../observability/logger.ts';
import { chatTitle } from '../conversations/chat-title.ts';
import type { SourceRef } from '../schemas.ts';
import type { Prepared } from './prepare-reply.ts';
import type { SendMessageDeps } from './reply-request.ts';

// What a finished reply leaves behind, whole or streamed: its sources flagged as cited, a whole
// reply stored under its prompt, and a new chat's title (a streamed reply is stored as it grows:
// reply-recorder.ts).

/** The sources with `cited` set on those the reply's [n] markers name (n counts from 1). */
export const flagCited = (sources: SourceRef[], cited: Set<number>): SourceRef[] =>
  sources.map((s, i) => ({ ...s, cited: cited.has(i + 1) }));

/** Stores the assistant's whole reply under the prompt it answers. */
export function storeReply(
  deps: SendMessageDeps,
  r: { chatId: string; userId: string; promptId: string; text: string; usage: Usage; sources?: SourceRef[] },
) {
  return deps.messages.append({
    chatId: r.chatId,
    userId: r.userId,
    parentId: r.promptId,
    message: r.text,
    messageType: 'ai',
    type: 'message',
    usage: r.usage,
    sources: r.sources,
    // Complete, as a streamed reply is stored once it ends (a whole reply that fails is not stored).
    status: 'complete',
    timestamp: isoNow(deps.clock),
  });
}

/** How long a title may take (it holds back the end of the first reply). */
const TITLE_TIMEOUT_MS = 5_000;

/**
 * Titles a chat created without a name from its first complete exchange (chat-title.ts); the
 * title when this call gave it, and the tokens it cost either way.
 */
export async function titleChat(
  deps: SendMessageDeps,
  { chat, userMessage }: Prepared,
  reply: string,
): Promise<{ title?: string; tokens: number }> {
  if (!chat.autoTitle) return { tokens: 0 };
  const made = await chatTitle(
    deps.provider,
    { prompt: userMessage.message, reply },
    AbortSignal.timeout(TITLE_TIMEOUT_MS),
  );
  if (!made) return { tokens: 0 };
  const tokens = made.usage?.totalTokens ?? 0;
  const applied = await deps.chats.setTitle(chat.id, made.title, isoNow(deps.clock)).catch((err: unknown) => {
    logger.warn('could not store the chat title', { message: asError(err).message });
    return false;
  });
  return applied ? { title: made.title, tokens } : { tokens };
}
