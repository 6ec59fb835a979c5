import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  applyIf,
  batchGetAll,
  batchWriteAll,
  deleteIf,
  isConditionFailure,
  mapLimit,
  queryPages,
  Repository,
  type Item,
} from '../../dynamo.ts';
import { distinctTerms } from './search-tokenizer.ts';
import { chatKey, chatPk, messageKey } from '../keys.ts';
import type { Chat, Message } from '../schemas.ts';

// The chat search index (docs/DECISIONS.md, Chat search; keys in docs/ARCHITECTURE.md):
//   SEARCH#<userId>#<term> / <yyyy-mm-dd>   refs: a string set, one ref per message (or chat
//                                           name) of that day holding the term
//   CHAT#<chatId> / META  searchName         the chat name as indexed (so a rename removes it)
// A ref is `<timestamp>|<chatId>|<sequenceNumber>|<messageId>`, sortable newest first; a chat
// name's ref has sequence 0 and no message id. A message costs one UpdateItem (ADD to a set, no
// read) per distinct term, at most MAX_TERMS_PER_MESSAGE; a day's block holds at most
// MAX_REFS_PER_BLOCK refs, so no write grows an item past a few tens of KB. The index is a hint:
// every hit is checked against the chat and the message at read (shared/chats/search/search-service.ts).

/** Terms indexed per message (the first distinct ones of its text). */
export const MAX_TERMS_PER_MESSAGE = 256;
/** Refs per term and day: a term past it that day (a word in every message) is no longer indexed. */
export const MAX_REFS_PER_BLOCK = 500;
/** Index updates removed when a chat is deleted; the rest is left to the check at read. */
export const MAX_CLEANUP_UPDATES = 5_000;
const WRITE_CONCURRENCY = 8;

export interface Ref {
  timestamp: string;
  chatId: string;
  sequenceNumber: number;
  /** Absent for a match of the chat's name. */
  messageId?: string;
}

export const formatRef = (r: Ref) => `${r.timestamp}|${r.chatId}|${r.sequenceNumber}|${r.messageId ?? ''}`;

export function parseRef(ref: string): Ref | undefined {
  const [timestamp, chatId, sequence, messageId] = ref.split('|');
  const sequenceNumber = Number(sequence);
  if (!timestamp || !chatId || !Number.isInteger(sequenceNumber) || messageId === undefined) return undefined;
  return { timestamp, chatId, sequenceNumber, ...(messageId && { messageId }) };
}

export const termPk = (userId: string, term: string) => `SEARCH#${userId}#${term}`;
const dayOf = (timestamp: string) => timestamp.slice(0, 10);

/** A day's block of a term: its day and its refs, newest first. */
export interface Block {
  day: string;
  refs: string[];
}

/** What a message needs to be indexed. */
type Indexable = Pick<Message, 'id' | 'chatId' | 'userId' | 'message' | 'type' | 'sequenceNumber' | 'timestamp'> & {
  status?: Message['status'];
};

/** A message is searchable once its text is final: not a reply still streaming, not an attachment. */
const searchable = (m: Indexable) => m.type === 'message' && m.status !== 'streaming' && m.message.trim() !== '';

/** Where a message's words point. */
const messageRef = (m: Indexable) =>
  formatRef({ timestamp: m.timestamp, chatId: m.chatId, sequenceNumber: m.sequenceNumber, messageId: m.id });

export class SearchIndex extends Repository {
  /** Indexes a stored message (skipped: attachments, replies still streaming, empty text). */
  async addMessage(m: Indexable): Promise<void> {
    if (!searchable(m)) return;
    await this.update('ADD', m.userId, distinctTerms(m.message, MAX_TERMS_PER_MESSAGE), dayOf(m.timestamp), [
      messageRef(m),
    ]);
  }

  /** Indexes the message stored at a sequence number as it is now (a streamed reply once finished). */
  async addStored(chatId: string, sequenceNumber: number): Promise<void> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: messageKey(chatId, sequenceNumber) }));
    if (out.Item) await this.addMessage(out.Item as Indexable);
  }

  /** Indexes the chat's name, replacing the name indexed before (a rename). */
  async setChatName(chat: Pick<Chat, 'id' | 'userId' | 'chatName' | 'createdAt'>): Promise<void> {
    const before = await this.db.send(
      new GetCommand({
        TableName: this.table,
        Key: chatKey(chat.id),
        ConsistentRead: true,
        ProjectionExpression: 'searchName',
      }),
    );
    const ref = formatRef({ timestamp: chat.createdAt, chatId: chat.id, sequenceNumber: 0 });
    const day = dayOf(chat.createdAt);
    const old = typeof before.Item?.searchName === 'string' ? distinctTerms(before.Item.searchName) : [];
    const next = distinctTerms(chat.chatName, MAX_TERMS_PER_MESSAGE);
    await this.update(
      'DELETE',
      chat.userId,
      old.filter((t) => !next.includes(t)),
      day,
      [ref],
    );
    await this.update(
      'ADD',
      chat.userId,
      next.filter((t) => !old.includes(t)),
      day,
      [ref],
    );
    // On the chat item itself, only while it exists (a chat deleted meanwhile is not brought back).
    await applyIf(this.db, {
      TableName: this.table,
      Key: chatKey(chat.id),
      UpdateExpression: 'SET searchName = :name',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':name': chat.chatName },
    });
  }

  /**
   * Removes a chat's entries (before its partition is emptied): its name's and each message's,
   * worked out again from the stored text. At most MAX_CLEANUP_UPDATES updates; what a longer
   * chat leaves behind is never shown (hits are checked at read).
   */
  async removeChat(chatId: string, userId: string): Promise<void> {
    const groups = new Map<string, { term: string; day: string; refs: string[] }>();
    const collect = (terms: string[], day: string, ref: string) => {
      for (const term of terms) {
        const key = `${term}\n${day}`;
        if (!groups.has(key)) groups.set(key, { term, day, refs: [] });
        groups.get(key)!.refs.push(ref);
      }
    };
    const chat = await this.db.send(
      new GetCommand({ TableName: this.table, Key: chatKey(chatId), ConsistentRead: true }),
    );
    if (typeof chat.Item?.searchName === 'string' && typeof chat.Item.createdAt === 'string') {
      const createdAt = chat.Item.createdAt;
      collect(
        distinctTerms(chat.Item.searchName),
        dayOf(createdAt),
        formatRef({ timestamp: createdAt, chatId, sequenceNumber: 0 }),
      );
    }
    const pages = queryPages(this.db, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :msg)',
      ExpressionAttributeValues: { ':pk': chatPk(chatId), ':msg': 'MSG#' },
    });
    for await (const items of pages) {
      for (const m of items as Indexable[]) {
        if (!searchable(m)) continue;
        const ref = formatRef({ timestamp: m.timestamp, chatId, sequenceNumber: m.sequenceNumber, messageId: m.id });
        collect(distinctTerms(m.message, MAX_TERMS_PER_MESSAGE), dayOf(m.timestamp), ref);
      }
      if (groups.size >= MAX_CLEANUP_UPDATES) break;
    }
    const updates = [...groups.values()].slice(0, MAX_CLEANUP_UPDATES);
    await mapLimit(updates, WRITE_CONCURRENCY, (g) => this.updateBlock('DELETE', userId, g.term, g.day, g.refs));
  }

  /**
   * Indexes many messages at once (seeding, back-filling): the same items addMessage would write,
   * read and written back in batches (100 reads, 25 writes a request) instead of an update per
   * term and message. Not for a user writing meanwhile: a block changed between the read and the
   * write loses that change. Returns the number of blocks written.
   */
  async addMessages(messages: Indexable[], concurrency = WRITE_CONCURRENCY): Promise<number> {
    const groups = new Map<string, { PK: string; SK: string; refs: string[] }>();
    for (const m of messages) {
      if (!searchable(m)) continue;
      const ref = messageRef(m);
      const day = dayOf(m.timestamp);
      for (const term of distinctTerms(m.message, MAX_TERMS_PER_MESSAGE)) {
        const PK = termPk(m.userId, term);
        const key = `${PK}\n${day}`;
        if (!groups.has(key)) groups.set(key, { PK, SK: day, refs: [] });
        groups.get(key)!.refs.push(ref);
      }
    }
    const blocks = [...groups.values()];
    const existing = await batchGetAll(
      this.db,
      this.table,
      blocks.map(({ PK, SK }) => ({ PK, SK })),
      { consistentRead: true },
    );
    for (const item of existing) {
      const block = groups.get(`${item.PK}\n${item.SK}`);
      if (block && item.refs instanceof Set) block.refs.unshift(...(item.refs as Set<string>));
    }
    await batchWriteAll(
      this.db,
      this.table,
      blocks.map(({ PK, SK, refs }) => ({
        PutRequest: { Item: { PK, SK, refs: new Set(refs.slice(0, MAX_REFS_PER_BLOCK)) } },
      })),
      concurrency,
    );
    return blocks.length;
  }

  /**
   * The term's blocks before `beforeDay` (exclusive), newest first, `limit` at most; `beforeDay`
   * undefined reads from the newest.
   */
  async blocks(userId: string, term: string, beforeDay: string | undefined, limit: number): Promise<Block[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: beforeDay ? 'PK = :pk AND SK < :before' : 'PK = :pk',
        ExpressionAttributeValues: { ':pk': termPk(userId, term), ...(beforeDay && { ':before': beforeDay }) },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map((item) => ({
      day: String(item.SK),
      refs: item.refs instanceof Set ? [...(item.refs as Set<string>)].sort().reverse() : [],
    }));
  }

  /** The chats and messages that hits point to, read in batches (missing ones are absent). */
  async read(refs: Ref[]): Promise<{ chats: Map<string, Item>; messages: Map<string, Item> }> {
    const chatIds = [...new Set(refs.map((r) => r.chatId))];
    const messageRefs = refs.filter((r) => r.messageId);
    const [chats, messages] = await Promise.all([
      batchGetAll(
        this.db,
        this.table,
        chatIds.map((id) => chatKey(id)),
      ),
      batchGetAll(
        this.db,
        this.table,
        messageRefs.map((r) => messageKey(r.chatId, r.sequenceNumber)),
      ),
    ]);
    return {
      chats: new Map(chats.map((c) => [String(c.id), c])),
      messages: new Map(messages.map((m) => [`${m.chatId}|${m.sequenceNumber}`, m])),
    };
  }

  private update(action: 'ADD' | 'DELETE', userId: string, terms: string[], day: string, refs: string[]) {
    return mapLimit(terms, WRITE_CONCURRENCY, (term) => this.updateBlock(action, userId, term, day, refs));
  }

  /**
   * ADD refs to (or DELETE them from) a term's block; an ADD to a full block is dropped. A block a
   * DELETE empties is removed (unless an ADD refilled it meanwhile): no key of a user outlives
   * what it indexed.
   */
  private async updateBlock(action: 'ADD' | 'DELETE', userId: string, term: string, day: string, refs: string[]) {
    if (!refs.length) return;
    const Key = { PK: termPk(userId, term), SK: day };
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key,
          UpdateExpression: `${action} refs :refs`,
          ExpressionAttributeValues: {
            ':refs': new Set(refs),
            ...(action === 'ADD' && { ':cap': MAX_REFS_PER_BLOCK }),
          },
          ...(action === 'ADD' && { ConditionExpression: 'attribute_not_exists(refs) OR size(refs) < :cap' }),
          ...(action === 'DELETE' && { ReturnValues: 'UPDATED_NEW' as const }),
        }),
      );
      if (action === 'DELETE' && !out.Attributes?.refs) {
        await deleteIf(this.db, { TableName: this.table, Key, ConditionExpression: 'attribute_not_exists(refs)' });
      }
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
  }
}
