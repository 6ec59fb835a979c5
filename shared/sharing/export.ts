import { isoNow, type Clock } from '../clock.ts';
import { readBranch } from '../chats/conversations/branch.ts';
import type { ChatRepository } from '../chats/conversations/chat-repository.ts';
import type { MessageRepository } from '../chats/conversations/message-repository.ts';
import type { Chat, Message } from '../chats/schemas.ts';
import { markdownInline, markdownQuote, markdownText } from './markdown.ts';
import { citationsOf, isUnfinished, readableTime, safeFileName } from './transcript.ts';

// GET /chat/{chatId}/export: the caller's chat, its active branch root to leaf, as a file
// (docs/DECISIONS.md, Export and share). The document is produced one message at a time and sent
// as it is produced (a streamed response), so its size is bounded by neither Lambda's 6 MB
// buffered payload nor a second copy in memory: what is held is the branch readBranch returns.

export const exportFormats = ['markdown', 'json'] as const;
export type ExportFormat = (typeof exportFormats)[number];

interface ExportDeps {
  chats: ChatRepository;
  messages: MessageRepository;
  clock: Clock;
}

/** A file: its name, media type and text in pieces. */
export interface ExportedFile {
  fileName: string;
  contentType: string;
  body: AsyncIterable<string>;
}

/**
 * The caller's chat as a file in `format`.
 * Steps: the chat (a stranger's is not found) → its active branch → the file, rendered lazily.
 */
export async function exportChat(
  deps: ExportDeps,
  input: { userId: string; chatId: string; format: ExportFormat },
): Promise<ExportedFile> {
  const chat = await deps.chats.getOwned(input.chatId, input.userId);
  const messages = await readBranch(deps.messages, chat.id);
  const exportedAt = isoNow(deps.clock);
  return input.format === 'json'
    ? {
        fileName: safeFileName(chat.chatName, 'json'),
        contentType: 'application/json; charset=utf-8',
        body: jsonDocument(chat, messages, exportedAt),
      }
    : {
        fileName: safeFileName(chat.chatName, 'md'),
        contentType: 'text/markdown; charset=utf-8',
        body: markdownDocument(chat, messages, exportedAt),
      };
}

/** A message as the JSON export holds it: the API's message without its owner, plus its citations. */
export function exportedMessage(m: Message) {
  const { userId: _owner, chatId: _chat, ...rest } = m;
  return { ...rest, citations: citationsOf(m.sources) };
}

/** The chat as the JSON export holds it (ExportedChat in the contract). */
export const exportedChat = (chat: Chat) => ({
  id: chat.id,
  name: chat.chatName,
  type: chat.type,
  status: chat.status,
  systemMessage: chat.systemMessage,
  createdAt: chat.createdAt,
  updatedAt: chat.updatedAt,
});

async function* jsonDocument(chat: Chat, messages: Message[], exportedAt: string): AsyncGenerator<string> {
  const head = { format: 'chat-export/1', exportedAt, chat: exportedChat(chat) };
  yield `${JSON.stringify(head).slice(0, -1)},"messages":[`;
  for (const [i, m] of messages.entries()) yield `${i ? ',' : ''}\n${JSON.stringify(exportedMessage(m))}`;
  yield '\n]}\n';
}

const speaker = (m: Message) => (m.messageType === 'ai' ? 'Assistant' : m.messageType === 'user' ? 'You' : 'System');

async function* markdownDocument(chat: Chat, messages: Message[], exportedAt: string): AsyncGenerator<string> {
  yield `# ${markdownInline(chat.chatName)}\n\n`;
  yield `${chat.type === 'file' ? 'File chat' : 'Chat'} created ${readableTime(chat.createdAt)}, exported ${readableTime(exportedAt)}; ${messages.length} messages.\n`;
  for (const m of messages) {
    let part = `\n---\n\n### ${speaker(m)} · ${readableTime(m.timestamp)}\n\n`;
    part += m.type === 'file' ? `*${markdownInline(m.message)}*\n` : `${markdownText(m.message)}\n`;
    if (m.messageType === 'ai' && isUnfinished(m))
      part += `\n*(This reply was cut short: ${m.status ?? 'incomplete'}.)*\n`;
    const citations = citationsOf(m.sources);
    if (citations.length) {
      part += '\n**Sources**\n\n';
      for (const c of citations) {
        const source = `${markdownInline(c.fileName ?? 'a document')}, page ${c.page}`;
        part += `- \\[${c.n}\\] ${source}\n\n${markdownQuote(c.quote, '  ')}\n\n`;
      }
    }
    yield part;
  }
}
