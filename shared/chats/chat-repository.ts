import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { createId } from '@paralleldrive/cuid2';
import { applyIf, deleteAll, putNew, Repository, updateExpression, updateIf, type Item, type Page } from '../dynamo.ts';
import { NotFoundError } from '../errors.ts';
import { userListKeys, userListPage } from '../user-index.ts';
import { chatKey, chatPk } from './keys.ts';
import { SearchIndex } from './search-index.ts';
import { DEFAULT_CHAT_NAME, DEFAULT_SYSTEM_MESSAGE, type Chat, type ChatStatus, type ChatType } from './schemas.ts';

// Chats: CHAT#<id> / META, listed per owner through GSI1 (USER#<userId> / CHAT#<createdAt>#<id>,
// newest first). A chat being deleted carries `deleting` and is invisible to every read; the
// flag also stops new messages from being appended while its partition is emptied.

interface NewChat {
  name?: string;
  type: ChatType;
  systemMessage?: string;
}

interface ChatChanges {
  name?: string;
  systemMessage?: string;
  status?: ChatStatus;
}

const chatNotFound = () => new NotFoundError('Chat not found');

/** The chat item: its keys, its fields and the message counter (which starts at 0). */
const toItem = (chat: Chat): Item => ({
  ...chatKey(chat.id),
  ...userListKeys('CHAT', chat),
  ...chat,
  messageCount: 0,
});

function fromItem(item: Item): Chat {
  const { id, userId, chatName, systemMessage, createdAt, updatedAt, status, type } = item as Chat;
  return { id, userId, chatName, systemMessage, createdAt, updatedAt, status, type };
}

export class ChatRepository extends Repository {
  async create(userId: string, input: NewChat, now: string): Promise<Chat> {
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
    await putNew(this.db, { TableName: this.table, Item: toItem(chat) });
    await new SearchIndex(this.db, this.table).setChatName(chat);
    return chat;
  }

  /** The chat, or undefined when it does not exist or is being deleted. */
  async get(chatId: string): Promise<Chat | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: chatKey(chatId), ConsistentRead: true }),
    );
    if (!out.Item || out.Item.deleting) return undefined;
    return fromItem(out.Item);
  }

  /** The caller's chat; a chat of someone else answers exactly like a missing one (not found). */
  async getOwned(chatId: string, userId: string): Promise<Chat> {
    const chat = await this.get(chatId);
    if (!chat || chat.userId !== userId) throw chatNotFound();
    return chat;
  }

  /** One page of the user's chats, newest first. */
  listByUser(userId: string, options: { limit: number; cursor?: string }): Promise<Page<Chat>> {
    return userListPage(this.db, this.table, userId, 'CHAT', options, fromItem, 'attribute_not_exists(deleting)');
  }

  /** Applies the changes to the caller's chat; not found when it is not theirs or does not exist. */
  async update(chatId: string, userId: string, changes: ChatChanges, now: string): Promise<Chat> {
    const u = updateExpression({
      updatedAt: now,
      ...(changes.name !== undefined && { chatName: changes.name }),
      ...(changes.systemMessage !== undefined && { systemMessage: changes.systemMessage }),
      ...(changes.status !== undefined && { status: changes.status }),
    });
    const updated = await updateIf(this.db, {
      TableName: this.table,
      Key: chatKey(chatId),
      ...u,
      ConditionExpression: 'attribute_exists(PK) AND userId = :userId AND attribute_not_exists(deleting)',
      ExpressionAttributeValues: { ...u.ExpressionAttributeValues, ':userId': userId },
    });
    if (!updated) throw chatNotFound();
    if (changes.name !== undefined) await new SearchIndex(this.db, this.table).setChatName(fromItem(updated));
    return fromItem(updated);
  }

  /**
   * Deletes the caller's chat and everything in its partition (messages, file attachments).
   * Steps: mark the chat `deleting` (conditional on the owner; a retry of an interrupted delete
   * passes too) → page through the partition, batch-deleting each page and retrying unprocessed
   * items → delete the chat item last, so an interrupted delete can be retried.
   * Returns the number of items removed, the chat item included.
   */
  async delete(chatId: string, userId: string): Promise<number> {
    const marked = await applyIf(this.db, {
      TableName: this.table,
      Key: chatKey(chatId),
      UpdateExpression: 'SET deleting = :true',
      ConditionExpression: 'attribute_exists(PK) AND userId = :userId',
      ExpressionAttributeValues: { ':true': true, ':userId': userId },
    });
    if (!marked) throw chatNotFound();
    await new SearchIndex(this.db, this.table).removeChat(chatId, userId);
    const removed = await deleteAll(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': chatPk(chatId) },
        ConsistentRead: true,
      },
      { keep: (k) => k.SK === 'META' },
    );
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: chatKey(chatId) }));
    return removed + 1;
  }
}
