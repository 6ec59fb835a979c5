import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { putIfAbsent, queryAll, Repository, type Item } from '../dynamo.ts';

// A file attached to a chat: CHAT#<chatId> / FILE#<fileId> in the chat's partition, so deleting
// the chat removes its attachments with it and retrieval lists a chat's files with one query.

interface Attachment {
  chatId: string;
  fileId: string;
  fileName: string;
  userId: string;
  attachedAt: string;
}

const attachmentKey = (chatId: string, fileId: string) => ({ PK: `CHAT#${chatId}`, SK: `FILE#${fileId}` });

function fromItem(item: Item): Attachment {
  const { chatId, fileId, fileName, userId, attachedAt } = item as unknown as Attachment;
  return { chatId, fileId, fileName, userId, attachedAt };
}

export class AttachmentRepository extends Repository {
  /** True when the attachment is new, false when the file was already attached to the chat. */
  attach(a: Attachment): Promise<boolean> {
    return putIfAbsent(this.db, { TableName: this.table, Item: { ...attachmentKey(a.chatId, a.fileId), ...a } });
  }

  listByChat(chatId: string): Promise<Attachment[]> {
    return queryAll(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :file)',
        ExpressionAttributeValues: { ':pk': `CHAT#${chatId}`, ':file': 'FILE#' },
      },
      fromItem,
    );
  }

  async detach(chatId: string, fileId: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: attachmentKey(chatId, fileId) }));
  }
}
