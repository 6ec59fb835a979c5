import { isoNow, type Clock } from '../../clock.ts';
import { isConditionFailure } from '../../dynamo.ts';
import type { AttachmentRepository } from '../../files/attachment-repository.ts';
import type { FileRepository } from '../../files/file-repository.ts';
import type { FileRecord } from '../../files/file-record.ts';
import { fileNotFound } from '../../files/file-status.ts';
import type { MessageRepository } from './message-repository.ts';
import type { ChatRepository } from './chat-repository.ts';
import { InvalidInputError } from '../../errors.ts';

// A file attached to a file chat (POST /message/pdf with chatId): the file lists the chat, the
// chat's partition lists the file, and the chat shows a `type: file` message, once per chat.

export interface AttachDeps {
  files: FileRepository;
  attachments: AttachmentRepository;
  messages: MessageRepository;
  clock: Clock;
}

/** The file in the chat's partition and a `type: file` message, once per chat. */
/** The caller's chat a file may be attached to: a file chat, active; 400 otherwise (anyone else's: not found). */
export async function attachableChat(chats: ChatRepository, chatId: string, userId: string) {
  const chat = await chats.getOwned(chatId, userId);
  if (chat.type !== 'file')
    throw new InvalidInputError('Documents can only be attached to a chat of type file', [
      { path: 'body.chatId', message: 'Not a file chat' },
    ]);
  if (chat.status !== 'active')
    throw new InvalidInputError('The chat is deactivated', [
      { path: 'body.chatId', message: 'The chat is deactivated' },
    ]);
  return chat;
}

export async function attachFile(deps: AttachDeps, record: FileRecord, chatId: string, userId: string): Promise<void> {
  const attachedAt = isoNow(deps.clock);
  try {
    await deps.files.addChat(record.id, chatId);
  } catch (err) {
    if (isConditionFailure(err)) throw fileNotFound(); // deleted meanwhile
    throw err;
  }
  const added = await deps.attachments.attach({
    chatId,
    fileId: record.id,
    fileName: record.fileName,
    userId,
    attachedAt,
  });
  if (!added) return;
  await deps.messages.append({
    chatId,
    userId,
    message: `Attached file: ${record.fileName} (${record.id})`,
    messageType: 'user',
    type: 'file',
    timestamp: attachedAt,
  });
  record.chatIds = [...new Set([...(record.chatIds ?? []), chatId])].sort();
}
