import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { createId } from '../../ids.ts';
import type { Usage } from '../../ai/types.ts';
import {
  batchGetAll,
  decodeCursor,
  invalidCursor,
  isConditionFailure,
  putNew,
  queryAll,
  Repository,
  type Item,
  type Page,
} from '../../dynamo.ts';
import { NotFoundError } from '../../errors.ts';
import { chatKey, chatPk, messageIdKey, messageKey, messageSk } from '../keys.ts';
import { MessageTree, type MessageNode } from './message-tree.ts';
import { SearchIndex } from '../search/search-index.ts';
import type { ContentType, Message, MessageType, ReplyStatus, SourceRef } from '../schemas.ts';

// Messages: CHAT#<chatId> / MSG#<sequence, 10 digits>, and a pointer CHAT#<chatId> / MSGID#<id>
// holding the sequence number, to find a message by id. A message's sequence number comes from an
// atomic counter on the chat item (ADD messageCount 1, conditional on the chat existing, being
// the given user's and not being deleted), so concurrent writers never share a number; the same
// write makes it the chat's active leaf. Messages form a tree (message-tree.ts).

interface AppendMessageInput {
  /** The message's id when it was announced before being stored (a streamed reply); new otherwise. */
  id?: string;
  chatId: string;
  /** The chat's owner; the append fails (not found) for a chat that is not theirs. */
  userId: string;
  /**
   * The message this one follows (null: a root). Absent: the chat's active leaf at the moment
   * the sequence number is taken. The caller has checked a given parent is in the chat.
   */
  parentId?: string | null;
  message: string;
  messageType: MessageType;
  type: ContentType;
  /** Token counts of an ai reply. */
  usage?: Usage;
  /** Passages an ai reply in a file chat was given (without their full text). */
  sources?: SourceRef[];
  /** An ai reply cut short (stopped, model failure mid-reply). */
  incomplete?: boolean;
  /** A streamed reply's state (shared/chats/replies/reply-repository.ts keeps the rest of it). */
  status?: ReplyStatus;
  /** Attributes of the item the API does not show (a streamed reply's replay state). */
  internal?: Item;
  /** Creation time (ISO 8601). */
  timestamp: string;
}

/** A message as a branch shows it: with the messages that follow the same parent. */
export type BranchMessage = Message & { parentId: string | null; siblingIds: string[] };

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
  if (item.parentId !== undefined) out.parentId = item.parentId;
  for (const k of ['usage', 'sources', 'incomplete', 'status', 'feedback'] as const) if (item[k]) out[k] = item[k];
  return out as Message;
}

/** The partition's messages, read for their place in the tree only. */
const NODE_PROJECTION = {
  ProjectionExpression: '#id, parentId, sequenceNumber, messageType, #type',
  ExpressionAttributeNames: { '#id': 'id', '#type': 'type' },
};

export class MessageRepository extends Repository {
  /**
   * Stores a message at the chat's next sequence number and makes it the chat's active leaf.
   * Steps: increment the chat's counter and set its active leaf (conditional: chat exists, is the
   * user's, is not being deleted; the old leaf is the default parent) → put the message, then
   * the pointer that finds it by id → re-read the chat: if a delete began meanwhile, remove the
   * message again so a deleted chat leaves nothing behind.
   */
  async append(input: AppendMessageInput): Promise<Message> {
    const id = input.id ?? createId();
    const before = await this.takeSequence(input.chatId, input.userId, id);
    const sequenceNumber = Number(before.messageCount ?? 0) + 1;
    const parentId =
      input.parentId !== undefined ? input.parentId : await this.leafBefore(input.chatId, before, sequenceNumber);
    const message: Message = {
      id,
      chatId: input.chatId,
      userId: input.userId,
      parentId,
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
    await this.db.send(
      new PutCommand({ TableName: this.table, Item: { ...messageIdKey(input.chatId, id), sequenceNumber } }),
    );
    const chat = await this.db.send(
      new GetCommand({
        TableName: this.table,
        Key: chatKey(input.chatId),
        ConsistentRead: true,
        ProjectionExpression: 'PK, deleting',
      }),
    );
    if (!chat.Item || chat.Item.deleting) {
      for (const Key of [messageKey(input.chatId, sequenceNumber), messageIdKey(input.chatId, id)])
        await this.db.send(new DeleteCommand({ TableName: this.table, Key }));
      throw chatNotFound();
    }
    await new SearchIndex(this.db, this.table).addMessage(message);
    return message;
  }

  /** Counts the message on the chat and makes it the active leaf; the chat item as it was before. */
  private async takeSequence(chatId: string, userId: string, messageId: string): Promise<Item> {
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: chatKey(chatId),
          UpdateExpression: 'ADD messageCount :one SET activeLeafId = :id',
          ConditionExpression: 'attribute_exists(PK) AND userId = :userId AND attribute_not_exists(deleting)',
          ExpressionAttributeValues: { ':one': 1, ':userId': userId, ':id': messageId },
          ReturnValues: 'ALL_OLD',
        }),
      );
      return out.Attributes ?? {};
    } catch (err) {
      if (isConditionFailure(err)) throw chatNotFound();
      throw err;
    }
  }

  /**
   * The active leaf when a message took `sequenceNumber`: the chat's, or in a chat from before the
   * tree (no active leaf yet) its newest message; null in an empty chat.
   */
  private async leafBefore(chatId: string, chat: Item, sequenceNumber: number): Promise<string | null> {
    if (typeof chat.activeLeafId === 'string') return chat.activeLeafId;
    if (sequenceNumber <= 1) return null;
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :first AND :last',
        ExpressionAttributeValues: {
          ':pk': chatPk(chatId),
          ':first': messageSk(1),
          ':last': messageSk(sequenceNumber - 1),
        },
        ScanIndexForward: false,
        Limit: 1,
        ...NODE_PROJECTION,
      }),
    );
    return (out.Items?.[0]?.id as string | undefined) ?? null;
  }

  /** The chat's messages as a tree (one read of the partition, projected to what the tree needs). */
  async tree(chatId: string): Promise<MessageTree> {
    const nodes = await queryAll(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :msg)',
        ExpressionAttributeValues: { ':pk': chatPk(chatId), ':msg': 'MSG#' },
        ...NODE_PROJECTION,
      },
      (item) => item as unknown as MessageNode,
    );
    return new MessageTree(nodes);
  }

  /** The leaf of the chat's active branch as last chosen (undefined before its first message). */
  async activeLeafId(chatId: string): Promise<string | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: chatKey(chatId), ProjectionExpression: 'activeLeafId' }),
    );
    return out.Item?.activeLeafId as string | undefined;
  }

  /** The messages at these sequence numbers, in sequence order (those gone are left out). */
  async at(chatId: string, sequenceNumbers: readonly number[]): Promise<Message[]> {
    const items = await batchGetAll(
      this.db,
      this.table,
      sequenceNumbers.map((n) => messageKey(chatId, n)),
    );
    return items.map(fromItem).sort((a, b) => a.sequenceNumber - b.sequenceNumber);
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

  /**
   * The message with this id in this chat, or undefined: through its pointer, or (a message from
   * before every message had one) through the tree.
   */
  async byId(chatId: string, messageId: string, tree?: MessageTree): Promise<Message | undefined> {
    const pointer = await this.db.send(
      new GetCommand({ TableName: this.table, Key: messageIdKey(chatId, messageId), ConsistentRead: true }),
    );
    const sequence = pointer.Item?.sequenceNumber ?? (tree ?? (await this.tree(chatId))).get(messageId)?.sequenceNumber;
    if (typeof sequence !== 'number') return undefined;
    const [message] = await this.at(chatId, [sequence]);
    return message?.id === messageId ? message : undefined;
  }

  /**
   * One page of the branch ending at `leafId`, root first, each message with its parent and
   * siblings. The cursor is the last message's key, checked to be this chat's.
   */
  async branchPage(
    chatId: string,
    tree: MessageTree,
    leafId: string | undefined,
    page: { limit: number; cursor?: string },
  ): Promise<Page<BranchMessage>> {
    const after = messageCursor(chatId, page.cursor);
    const rest = tree.branch(leafId).filter((n) => n.sequenceNumber > after);
    const nodes = rest.slice(0, page.limit);
    const messages = await this.at(
      chatId,
      nodes.map((n) => n.sequenceNumber),
    );
    const items = messages.map((m) => ({
      ...m,
      parentId: tree.get(m.id)?.parentId ?? null,
      siblingIds: tree.siblingIds(m.id),
    }));
    const last = nodes.at(-1);
    return rest.length > page.limit && last ? { items, lastKey: messageKey(chatId, last.sequenceNumber) } : { items };
  }

  /**
   * The messages of the branch ending at `leafId`, newest first, read `pageSize` at a time (the
   * history of a prompt is read only as far back as its token budget reaches).
   */
  async *branchNewestFirst(
    chatId: string,
    tree: MessageTree,
    leafId: string | null,
    pageSize = 25,
  ): AsyncGenerator<Message> {
    const nodes = leafId ? tree.branch(leafId).reverse() : [];
    for (let i = 0; i < nodes.length; i += pageSize) {
      const messages = await this.at(
        chatId,
        nodes.slice(i, i + pageSize).map((n) => n.sequenceNumber),
      );
      yield* messages.reverse();
    }
  }
}

/** The sequence number a list cursor continues after (0 for the first page). */
function messageCursor(chatId: string, cursor: string | undefined): number {
  const key = decodeCursor(cursor, ['PK', 'SK'], { PK: chatPk(chatId) }, { SK: 'MSG#' });
  if (!key) return 0;
  const sequence = Number(String(key.SK).slice('MSG#'.length));
  if (!Number.isSafeInteger(sequence)) throw invalidCursor();
  return sequence;
}

/**
 * Appends a message to a chat at its next sequence number, given only a client and a table (the
 * tests write histories with it). Throws NotFoundError when the chat does not exist, is not
 * `userId`'s, or is being deleted.
 */
export function appendMessage(db: DynamoDBDocumentClient, table: string, input: AppendMessageInput): Promise<Message> {
  return new MessageRepository(db, table).append(input);
}
