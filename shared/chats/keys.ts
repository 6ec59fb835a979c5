// Keys of the chat partition (docs/ARCHITECTURE.md, Access patterns). One partition per chat holds
// everything that belongs to it, so deleting a chat is one paged query over one partition:
//   CHAT#<id> / META             the chat (listed in its owner's GSI1 partition, shared/user-index.ts)
//   CHAT#<id> / MSG#<seq:10>     its messages, in sequence order
//   CHAT#<id> / FILE#<fileId>    its file attachments (written by the PDF ingestion)
//   CHAT#<id> / MSGID#<msgId>    where a streamed reply sits (its sequence number), to find it by id
//   CHAT#<id> / SHARE, SHARE#…   its public share and the snapshot's parts (shared/sharing/share-repository.ts)

const SEQUENCE_DIGITS = 10;

export const chatPk = (chatId: string) => `CHAT#${chatId}`;
export const chatKey = (chatId: string) => ({ PK: chatPk(chatId), SK: 'META' });
export const messageSk = (sequenceNumber: number) => `MSG#${String(sequenceNumber).padStart(SEQUENCE_DIGITS, '0')}`;
export const messageKey = (chatId: string, sequenceNumber: number) => ({
  PK: chatPk(chatId),
  SK: messageSk(sequenceNumber),
});
export const messageIdKey = (chatId: string, messageId: string) => ({ PK: chatPk(chatId), SK: `MSGID#${messageId}` });
