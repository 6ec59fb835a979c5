// Keys of the chat partition (DESIGN §5). One partition per chat holds everything that belongs to
// it, so deleting a chat is one paged query over one partition:
//   CHAT#<id> / META             the chat (GSI1: USER#<userId> / CHAT#<createdAt>#<id>)
//   CHAT#<id> / MSG#<seq:10>     its messages, in sequence order
//   CHAT#<id> / FILE#<fileId>    its file attachments (written by the PDF ingestion)

export const SEQUENCE_DIGITS = 10;

export const chatPk = (chatId: string) => `CHAT#${chatId}`;
export const chatKey = (chatId: string) => ({ PK: chatPk(chatId), SK: 'META' });
export const messageSk = (sequenceNumber: number) => `MSG#${String(sequenceNumber).padStart(SEQUENCE_DIGITS, '0')}`;
export const messageKey = (chatId: string, sequenceNumber: number) => ({ PK: chatPk(chatId), SK: messageSk(sequenceNumber) });
export const userChatsPk = (userId: string) => `USER#${userId}`;
export const userChatsSk = (createdAt: string, chatId: string) => `CHAT#${createdAt}#${chatId}`;

/** Attributes of an item that are storage detail, never returned by the API. */
export const STORAGE_ATTRIBUTES = ['PK', 'SK', 'GSI1PK', 'GSI1SK', 'GSI2PK', 'GSI2SK', 'messageCount', 'deleting'] as const;

export function withoutStorageAttributes<T>(item: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...item };
  for (const name of STORAGE_ATTRIBUTES) delete out[name];
  return out as T;
}
