import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { createId } from '../../ids.ts';
import {
  applyIf,
  deleteAll,
  putNew,
  Repository,
  updateExpression,
  updateIf,
  type Item,
  type Page,
} from '../../dynamo.ts';
import { NotFoundError, ownedBy } from '../../errors.ts';
import { createdKeys } from '../../created-index.ts';
import { userListKeys, userListPage } from '../../user-index.ts';
import { chatKey, chatPk } from '../keys.ts';
import { SearchIndex } from '../search/search-index.ts';
import { DEFAULT_CHAT_NAME, DEFAULT_SYSTEM_MESSAGE, type ChatStatus, type ChatType } from '../requests.ts';
import type { Chat } from '../schemas.ts';

// Chats: CHAT#<id> / META, listed per owner through GSI1 (USER#<userId> / CHAT#<createdAt>#<id>,
// newest first). A chat being deleted carries `deleting` and is invisible to every read; the
// flag also stops new messages from being appended while its partition is emptied. A chat created
// without a name carries `autoTitle` until its first exchange titles it or its user names it.

interface NewChat {
  name?: string;
  type: ChatType;
  systemMessage?: string;
  /** A file chat bound to a collection. */
  collectionId?: string;
}

interface ChatChanges {
  name?: string;
  systemMessage?: string;
  status?: ChatStatus;
  activeLeafId?: string;
}

/** The chat with what the service needs beside the API's fields. */
export interface ChatRecord extends Chat {
  /** Created without a name and not yet named or titled: its first exchange gives it a title. */
  autoTitle: boolean;
}

const chatNotFound = () => new NotFoundError('Chat not found');

/** The chat item: its keys, its fields and the message counter (which starts at 0). */
const toItem = (chat: Chat, autoTitle: boolean): Item => ({
  ...chatKey(chat.id),
  ...userListKeys('CHAT', chat),
  ...createdKeys('CHAT', chat),
  ...chat,
  messageCount: 0,
  ...(autoTitle && { autoTitle: true }),
});

function fromItem(item: Item): Chat {
  const { id, userId, chatName, systemMessage, createdAt, updatedAt, status, type, activeLeafId, collectionId } =
    item as Chat;
  return {
    id,
    userId,
    chatName,
    systemMessage,
    createdAt,
    updatedAt,
    status,
    type,
    ...(activeLeafId && { activeLeafId }),
    collectionId,
  };
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
      collectionId: input.collectionId,
    };
    // `usageCounted`: the chat is in its owner's usage counters (chats made before them are not).
    await putNew(this.db, {
      TableName: this.table,
      Item: { ...toItem(chat, input.name === undefined), usageCounted: true },
    });
    await new SearchIndex(this.db, this.table).setChatName(chat);
    return chat;
  }

  /** The chat, or undefined when it does not exist or is being deleted. */
  async get(chatId: string): Promise<Chat | undefined> {
    const record = await this.record(chatId);
    if (!record) return undefined;
    const { autoTitle: _autoTitle, ...chat } = record;
    return chat;
  }

  /** The chat with its state beside the API's fields; undefined as for `get`. */
  async record(chatId: string): Promise<ChatRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: chatKey(chatId), ConsistentRead: true }),
    );
    if (!out.Item || out.Item.deleting) return undefined;
    return { ...fromItem(out.Item), autoTitle: out.Item.autoTitle === true };
  }

  /**
   * Names a chat from its first exchange, unless it has been named meanwhile (a name the user
   * set is never replaced); false when it was.
   */
  async setTitle(chatId: string, title: string, now: string): Promise<boolean> {
    const titled = await updateIf(this.db, {
      TableName: this.table,
      Key: chatKey(chatId),
      UpdateExpression: 'SET chatName = :title, updatedAt = :now REMOVE autoTitle',
      ConditionExpression: 'autoTitle = :true AND attribute_not_exists(deleting)',
      ExpressionAttributeValues: { ':title': title, ':now': now, ':true': true },
    });
    if (titled) await new SearchIndex(this.db, this.table).setChatName(fromItem(titled));
    return titled !== undefined;
  }

  /** The caller's chat; a chat of someone else answers exactly like a missing one (not found). */
  async getOwned(chatId: string, userId: string): Promise<Chat> {
    return ownedBy(await this.get(chatId), userId, chatNotFound);
  }

  /** One page of the user's chats, newest first. */
  listByUser(userId: string, options: { limit: number; cursor?: string }): Promise<Page<Chat>> {
    return userListPage(this.db, this.table, userId, 'CHAT', options, fromItem, 'attribute_not_exists(deleting)');
  }

  /** Applies the changes to the caller's chat; not found when it is not theirs or does not exist. */
  async update(chatId: string, userId: string, changes: ChatChanges, now: string): Promise<Chat> {
    const u = updateExpression(
      {
        updatedAt: now,
        ...(changes.name !== undefined && { chatName: changes.name }),
        ...(changes.systemMessage !== undefined && { systemMessage: changes.systemMessage }),
        ...(changes.status !== undefined && { status: changes.status }),
        ...(changes.activeLeafId !== undefined && { activeLeafId: changes.activeLeafId }),
      },
      changes.name !== undefined ? ['autoTitle'] : [],
    );
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
   * Returns the number of items removed, the chat item included, and whether this call removed
   * a chat counted in its owner's usage (false when a concurrent attempt removed it first, so the
   * chat is uncounted once).
   */
  async delete(chatId: string, userId: string): Promise<{ removed: number; uncount: boolean }> {
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
    const out = await this.db.send(
      new DeleteCommand({ TableName: this.table, Key: chatKey(chatId), ReturnValues: 'ALL_OLD' }),
    );
    return { removed: removed + (out.Attributes ? 1 : 0), uncount: out.Attributes?.usageCounted === true };
  }
}
