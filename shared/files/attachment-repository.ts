import { DeleteCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '../dynamo.ts';

// A file attached to a chat: CHAT#<chatId> / FILE#<fileId> in the chat's partition, so deleting
// the chat removes its attachments with it and retrieval lists a chat's files with one query.

export interface Attachment {
  chatId: string;
  fileId: string;
  fileName: string;
  userId: string;
  attachedAt: string;
}

const attachmentKey = (chatId: string, fileId: string) => ({ PK: `CHAT#${chatId}`, SK: `FILE#${fileId}` });

export class AttachmentRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** True when the attachment is new, false when the file was already attached to the chat. */
  async attach(a: Attachment): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...attachmentKey(a.chatId, a.fileId), ...a },
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  async listByChat(chatId: string): Promise<Attachment[]> {
    const out: Attachment[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const res = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :file)',
          ExpressionAttributeValues: { ':pk': `CHAT#${chatId}`, ':file': 'FILE#' },
          ExclusiveStartKey: start,
        }),
      );
      out.push(...(res.Items ?? []).map(({ PK: _pk, SK: _sk, ...a }) => a as Attachment));
      start = res.LastEvaluatedKey;
    } while (start);
    return out;
  }

  async detach(chatId: string, fileId: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: attachmentKey(chatId, fileId) }));
  }
}
