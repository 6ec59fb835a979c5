import { DeleteCommand, GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createId } from '@paralleldrive/cuid2';
import type { Usage } from '../ai/types.ts';
import { putNew, queryAll, queryPage, queryPages, Repository, updateIf, type Item, type Page } from '../dynamo.ts';
import { NotFoundError } from '../errors.ts';
import { chatKey, chatPk, messageKey, messageSk } from './keys.ts';
import { SearchIndex } from './search-index.ts';
import type { ContentType, Message, MessageType, ReplyStatus, SourceRef } from './schemas.ts';

// Messages: CHAT#<chatId> / MSG#<sequence, 10 digits>. A message's sequence number comes from an
// atomic counter on the chat item (ADD messageCount 1, conditional on the chat existing, being
// the given user's and not being deleted), so concurrent writers never share a number.

interface AppendMessageInput {
  /** The message's id when it was announced before being stored (a streamed reply); new otherwise. */
  id?: string;
  chatId: string;
  /** The chat's owner; the append fails (not found) for a chat that is not theirs. */
  userId: string;
  message: string;
  messageType: MessageType;
  type: ContentType;
  /** Token counts of an ai reply. */
  usage?: Usage;
  /** Passages an ai reply in a file chat was given (without their full text). */
  sources?: SourceRef[];
  /** An ai reply cut short (stopped, model failure mid-reply). */
  incomplete?: boolean;
  /** A streamed reply's state (shared/chats/reply-repository.ts keeps the rest of it). */
  status?: ReplyStatus;
  /** Attributes of the item the API does not show (a streamed reply's replay state). */
  internal?: Item;
  /** Creation time (ISO 8601). */
  timestamp: string;
}

const chatNotFound = () => new NotFoundError('Chat not found');

const toItem = (m: Message, internal: Item = {}): Item => ({
  ...messageKey(m.chatId, m.sequenceNumber),
  ...internal,
  ...m,
});

const MESSAGE_FIELDS = [
  'id',
  'chatId',
  'userId',
  'message',
  'messageType',
  'type',
  'sequenceNumber',
  'timestamp',
] as const;

/** The message as the API shows it (the item's other attributes stay in the table). */
export function fromItem(item: Item): Message {
  const out: Item = Object.fromEntries(MESSAGE_FIELDS.map((k) => [k, item[k]]));
  for (const k of ['usage', 'sources', 'incomplete', 'status'] as const) if (item[k]) out[k] = item[k];
  return out as Message;
}

export class MessageRepository extends Repository {
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
      timestamp: input.timestamp,
      ...(input.usage && { usage: input.usage }),
      ...(input.sources && { sources: input.sources }),
      ...(input.incomplete && { incomplete: true as const }),
      ...(input.status && { status: input.status }),
    };
    await putNew(this.db, { TableName: this.table, Item: toItem(message, input.internal) });
    const chat = await this.db.send(
      new GetCommand({
        TableName: this.table,
        Key: chatKey(input.chatId),
        ConsistentRead: true,
        ProjectionExpression: 'PK, deleting',
      }),
    );
    if (!chat.Item || chat.Item.deleting) {
      await this.db.send(new DeleteCommand({ TableName: this.table, Key: messageKey(input.chatId, sequenceNumber) }));
      throw chatNotFound();
    }
    await new SearchIndex(this.db, this.table).addMessage(message);
    return message;
  }

  private async nextSequence(chatId: string, userId: string): Promise<number> {
    const counted = await updateIf(this.db, {
      TableName: this.table,
      Key: chatKey(chatId),
      UpdateExpression: 'ADD messageCount :one',
      ConditionExpression: 'attribute_exists(PK) AND userId = :userId AND attribute_not_exists(deleting)',
      ExpressionAttributeValues: { ':one': 1, ':userId': userId },
      ReturnValues: 'UPDATED_NEW',
    });
    if (!counted) throw chatNotFound();
    return Number(counted.messageCount);
  }

  /** One page of a chat's messages in sequence order. The cursor is checked to be this chat's. */
  list(chatId: string, options: { limit: number; cursor?: string }): Promise<Page<Message>> {
    const pk = chatPk(chatId);
    return queryPage(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :msg)',
        ExpressionAttributeValues: { ':pk': pk, ':msg': 'MSG#' },
      },
      {
        limit: options.limit,
        cursor: options.cursor,
        keyAttributes: ['PK', 'SK'],
        fixed: { PK: pk },
        prefixes: { SK: 'MSG#' },
      },
      fromItem,
    );
  }

  /** Every message of the chat in sequence order. */
  all(chatId: string): Promise<Message[]> {
    return queryAll(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :msg)',
        ExpressionAttributeValues: { ':pk': chatPk(chatId), ':msg': 'MSG#' },
      },
      fromItem,
    );
  }

  /** The message with this id in this chat, or undefined. PLACEHOLDER: reads the partition. */
  async byId(chatId: string, messageId: string): Promise<Message | undefined> {
    return (await this.all(chatId)).find((m) => m.id === messageId);
  }

  /**
   * The messages before `beforeSequence`, newest first, one page of `pageSize` at a time
   * (the history of a prompt is read only as far back as its token budget reaches).
   */
  async *newestFirst(chatId: string, beforeSequence: number, pageSize = 25): AsyncGenerator<Message> {
    if (beforeSequence <= 1) return;
    const pages = queryPages(this.db, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :pk AND SK BETWEEN :first AND :last',
      ExpressionAttributeValues: {
        ':pk': chatPk(chatId),
        ':first': messageSk(1),
        ':last': messageSk(beforeSequence - 1),
      },
      ScanIndexForward: false,
      Limit: pageSize,
    });
    for await (const items of pages) for (const item of items) yield fromItem(item);
  }
}

/**
 * Appends a message to a chat at its next sequence number, given only a client and a table (the
 * tests write histories with it). Throws NotFoundError when the chat does not exist, is not
 * `userId`'s, or is being deleted.
 */
export function appendMessage(db: DynamoDBDocumentClient, table: string, input: AppendMessageInput): Promise<Message> {
  return new MessageRepository(db, table).append(input);
}
