import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { createId } from '@paralleldrive/cuid2';
import { batchWriteAll, isConditionFailure } from '../dynamo.ts';
import { NotFoundError } from '../errors.ts';
import { decodeCursor, queryPage } from '../http/pagination.ts';
import { chatKey, chatPk, userChatsPk, userChatsSk, withoutStorageAttributes } from './keys.ts';
import { invalidCursor, type Page } from './message-repository.ts';
import { DEFAULT_CHAT_NAME, DEFAULT_SYSTEM_MESSAGE, type Chat, type ChatStatus, type ChatType } from './schemas.ts';

// Chats: CHAT#<id> / META, listed per owner through GSI1 (USER#<userId> / CHAT#<createdAt>#<id>,
// newest first). A chat being deleted carries `deleting` and is invisible to every read; the
// flag also stops new messages from being appended while its partition is emptied.

export interface NewChat {
  name?: string;
  type: ChatType;
  systemMessage?: string;
}

export interface ChatChanges {
  name?: string;
  systemMessage?: string;
  status?: ChatStatus;
}

const CHAT_LIST_KEYS = ['PK', 'SK', 'GSI1PK', 'GSI1SK'] as const;

const chatNotFound = () => new NotFoundError('Chat not found');

export class ChatRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async create(userId: string, input: NewChat, now = new Date().toISOString()): Promise<Chat> {
    const chat: Chat = {
      id: createId(),
      userId,
      chatName: input.name ?? DEFAULT_CHAT_NAME,
      systemMessage: input.systemMessage ?? DEFAULT_SYSTEM_MESSAGE,
      createdAt: now,
      updatedAt: now,
      status: 'active',
      type: input.type,
    };
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          ...chatKey(chat.id),
          GSI1PK: userChatsPk(userId),
          GSI1SK: userChatsSk(now, chat.id),
          ...chat,
          messageCount: 0,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
    return chat;
  }

  /** The chat, or undefined when it does not exist or is being deleted. */
  async get(chatId: string): Promise<Chat | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: chatKey(chatId), ConsistentRead: true }));
    if (!out.Item || out.Item.deleting) return undefined;
    return withoutStorageAttributes<Chat>(out.Item);
  }

  /** The caller's chat; a chat of someone else answers exactly like a missing one (404). */
  async getOwned(chatId: string, userId: string): Promise<Chat> {
    const chat = await this.get(chatId);
    if (!chat || chat.userId !== userId) throw chatNotFound();
    return chat;
  }

  /** One page of the user's chats, newest first. */
  async listByUser(userId: string, options: { limit: number; cursor?: string }): Promise<Page<Chat>> {
    const start = decodeCursor(options.cursor, CHAT_LIST_KEYS, { GSI1PK: userChatsPk(userId) });
    if (start && (start.GSI1PK !== userChatsPk(userId) || !String(start.GSI1SK).startsWith('CHAT#'))) throw invalidCursor();
    const out = await queryPage(
      this.db,
      {
        TableName: this.table,
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :chat)',
        FilterExpression: 'attribute_not_exists(deleting)',
        ExpressionAttributeValues: { ':pk': userChatsPk(userId), ':chat': 'CHAT#' },
        ScanIndexForward: false,
        ...(start && { ExclusiveStartKey: start }),
      },
      options.limit,
      CHAT_LIST_KEYS,
    );
    const items = out.items.map((i) => withoutStorageAttributes<Chat>(i));
    return { items, ...(out.lastKey && { lastKey: out.lastKey }) };
  }

  /** Applies the changes to the caller's chat; 404 when it is not theirs or does not exist. */
  async update(chatId: string, userId: string, changes: ChatChanges, now = new Date().toISOString()): Promise<Chat> {
    const sets = ['updatedAt = :now'];
    const values: Record<string, unknown> = { ':now': now, ':userId': userId };
    const names: Record<string, string> = {};
    if (changes.name !== undefined) {
      sets.push('chatName = :name');
      values[':name'] = changes.name;
    }
    if (changes.systemMessage !== undefined) {
      sets.push('systemMessage = :systemMessage');
      values[':systemMessage'] = changes.systemMessage;
    }
    if (changes.status !== undefined) {
      sets.push('#status = :status');
      names['#status'] = 'status';
      values[':status'] = changes.status;
    }
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: chatKey(chatId),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: 'attribute_exists(PK) AND userId = :userId AND attribute_not_exists(deleting)',
          ExpressionAttributeValues: values,
          ...(Object.keys(names).length && { ExpressionAttributeNames: names }),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return withoutStorageAttributes<Chat>(out.Attributes!);
    } catch (err) {
      if (isConditionFailure(err)) throw chatNotFound();
      throw err;
    }
  }

  /**
   * Deletes the caller's chat and everything in its partition (messages, file attachments).
   * Steps: mark the chat `deleting` (conditional on the owner; a retry of an interrupted delete
   * passes too) → page through the partition, batch-deleting each page and retrying unprocessed
   * items → delete the chat item last, so an interrupted delete can be retried.
   * Returns the number of items removed, the chat item included.
   */
  async delete(chatId: string, userId: string): Promise<number> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: chatKey(chatId),
          UpdateExpression: 'SET deleting = :true',
          ConditionExpression: 'attribute_exists(PK) AND userId = :userId',
          ExpressionAttributeValues: { ':true': true, ':userId': userId },
        }),
      );
    } catch (err) {
      if (isConditionFailure(err)) throw chatNotFound();
      throw err;
    }
    let removed = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'PK = :pk',
          ExpressionAttributeValues: { ':pk': chatPk(chatId) },
          ProjectionExpression: 'PK, SK',
          ConsistentRead: true,
          ...(start && { ExclusiveStartKey: start }),
        }),
      );
      const keys = (out.Items ?? []).filter((k) => k.SK !== 'META') as { PK: string; SK: string }[];
      await batchWriteAll(this.db, this.table, keys.map((Key) => ({ DeleteRequest: { Key } })));
      removed += keys.length;
      start = out.LastEvaluatedKey;
    } while (start);
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: chatKey(chatId) }));
    return removed + 1;
  }

}
