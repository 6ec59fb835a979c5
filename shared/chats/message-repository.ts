import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createId } from '@paralleldrive/cuid2';
import type { Usage } from '../ai/types.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import { decodeCursor, queryPage, type Key } from '../http/pagination.ts';
import { chatKey, chatPk, messageKey, messageSk, withoutStorageAttributes } from './keys.ts';
import type { ContentType, Message, MessageType, SourceRef } from './schemas.ts';
import { isConditionFailure } from '../dynamo.ts';

// Messages: CHAT#<chatId> / MSG#<sequence, 10 digits>. A message's sequence number comes from an
// atomic counter on the chat item (ADD messageCount 1, conditional on the chat existing, being
// the given user's and not being deleted), so concurrent writers never share a number.

export interface AppendMessageInput {
  /** The message's id when it was announced before being stored (a streamed reply); new otherwise. */
  id?: string;
  chatId: string;
  /** The chat's owner; the append fails (404) for a chat that is not theirs. */
  userId: string;
  message: string;
  messageType: MessageType;
  type: ContentType;
  /** Token counts of an ai reply. */
  usage?: Usage;
  /** Passages an ai reply in a file chat was given (without their full text). */
  sources?: SourceRef[];
  /** An ai reply cut short (client gone, model failure mid-reply). */
  incomplete?: boolean;
  /** Creation time; now by default. */
  timestamp?: string;
}

export interface Page<T> {
  items: T[];
  /** The DynamoDB key to continue from; absent on the last page. */
  lastKey?: Record<string, unknown>;
}


const chatNotFound = () => new NotFoundError('Chat not found');

export const invalidCursor = () =>
  new InvalidInputError('Invalid cursor', [{ path: 'query.cursor', message: 'Not a cursor this list issued' }]);

export class MessageRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Stores a message at the chat's next sequence number.
   * Steps: increment the chat's counter (conditional: chat exists, is the user's, is not being
   * deleted) → put the message → re-read the chat: if a delete began meanwhile, remove the
   * message again so a deleted chat leaves nothing behind.
   */
  async append(input: AppendMessageInput): Promise<Message> {
    const sequenceNumber = await this.nextSequence(input.chatId, input.userId);
    const message: Message = {
      id: input.id ?? createId(),
      chatId: input.chatId,
      userId: input.userId,
      message: input.message,
      messageType: input.messageType,
      type: input.type,
      sequenceNumber,
      timestamp: input.timestamp ?? new Date().toISOString(),
      ...(input.usage && { usage: input.usage }),
      ...(input.sources && { sources: input.sources }),
      ...(input.incomplete && { incomplete: true as const }),
    };
    const key = messageKey(input.chatId, sequenceNumber);
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: { ...key, ...message },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
    const chat = await this.db.send(
      new GetCommand({ TableName: this.table, Key: chatKey(input.chatId), ConsistentRead: true, ProjectionExpression: 'PK, deleting' }),
    );
    if (!chat.Item || chat.Item.deleting) {
      await this.db.send(new DeleteCommand({ TableName: this.table, Key: key }));
      throw chatNotFound();
    }
    return message;
  }

  private async nextSequence(chatId: string, userId: string): Promise<number> {
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: chatKey(chatId),
          UpdateExpression: 'ADD messageCount :one',
          ConditionExpression: 'attribute_exists(PK) AND userId = :userId AND attribute_not_exists(deleting)',
          ExpressionAttributeValues: { ':one': 1, ':userId': userId },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return Number(out.Attributes!.messageCount);
    } catch (err) {
      if (isConditionFailure(err)) throw chatNotFound();
      throw err;
    }
  }

  /** One page of a chat's messages in sequence order. The cursor is checked to be this chat's. */
  async list(chatId: string, options: { limit: number; cursor?: string }): Promise<Page<Message>> {
    const start = decodeMessageCursor(chatId, options.cursor);
    const out = await queryPage(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :msg)',
        ExpressionAttributeValues: { ':pk': chatPk(chatId), ':msg': 'MSG#' },
        ...(start && { ExclusiveStartKey: start }),
      },
      options.limit,
      ['PK', 'SK'],
    );
    const items = out.items.map((i) => withoutStorageAttributes<Message>(i));
    return { items, ...(out.lastKey && { lastKey: out.lastKey }) };
  }

  /**
   * The messages before `beforeSequence`, newest first, one page of `pageSize` at a time
   * (the history of a prompt is read only as far back as its token budget reaches).
   */
  async *newestFirst(chatId: string, beforeSequence: number, pageSize = 25): AsyncGenerator<Message> {
    if (beforeSequence <= 1) return;
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'PK = :pk AND SK BETWEEN :first AND :last',
          ExpressionAttributeValues: { ':pk': chatPk(chatId), ':first': messageSk(1), ':last': messageSk(beforeSequence - 1) },
          ScanIndexForward: false,
          Limit: pageSize,
          ...(start && { ExclusiveStartKey: start }),
        }),
      );
      for (const item of out.Items ?? []) yield withoutStorageAttributes<Message>(item);
      start = out.LastEvaluatedKey;
    } while (start);
  }
}

function decodeMessageCursor(chatId: string, cursor: string | undefined): Key | undefined {
  const key = decodeCursor(cursor, ['PK', 'SK'], { PK: chatPk(chatId) });
  if (key && (key.PK !== chatPk(chatId) || !String(key.SK).startsWith('MSG#'))) {
    // A cursor of another chat's list (decodeCursor checks the attribute names only).
    throw invalidCursor();
  }
  return key;
}

/**
 * Appends a message to a chat at its next sequence number (for other domains, e.g. the PDF
 * ingestion attaching a file: `messageType: 'user', type: 'file'`). Throws NotFoundError when the
 * chat does not exist, is not `userId`'s, or is being deleted.
 */
export function appendMessage(db: DynamoDBDocumentClient, table: string, input: AppendMessageInput): Promise<Message> {
  return new MessageRepository(db, table).append(input);
}
