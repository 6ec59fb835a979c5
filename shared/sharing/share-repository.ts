import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { GreedyPacker } from '../batches.ts';
import { chatKey, chatPk } from '../chats/keys.ts';
import { batchGetAll, batchWriteAll, deleteIf, queryAll, Repository, type Item } from '../dynamo.ts';
import type { SharedMessage } from './share-snapshot.ts';

// A chat's share lives in the chat's own partition, so deleting the chat (one paged delete of the
// partition) removes it with everything else (docs/ARCHITECTURE.md, Access patterns):
//   CHAT#<chatId> / SHARE                       the live share: its id, name, time, part count;
//                                               found by id through GSI1 (SHARE#<shareId> / SHARE)
//   CHAT#<chatId> / SHARE#<shareId>#<part:4>    its snapshot's messages, in parts under the item limit
// One live share per chat: sharing again replaces the head (a new id) and removes the old parts.

/** The snapshot's messages per item: well under DynamoDB's 400 KB item limit. */
const PART_MAX_BYTES = 300_000;

export interface ShareHead {
  chatId: string;
  shareId: string;
  chatName: string;
  sharedAt: string;
  parts: number;
}

const headKey = (chatId: string) => ({ PK: chatPk(chatId), SK: 'SHARE' });
const partPrefix = (shareId: string) => `SHARE#${shareId}#`;
const partKey = (chatId: string, shareId: string, part: number) => ({
  PK: chatPk(chatId),
  SK: `${partPrefix(shareId)}${String(part).padStart(4, '0')}`,
});
const indexPartition = (shareId: string) => `SHARE#${shareId}`;

const headOf = (item: Item): ShareHead => {
  const { chatId, shareId, chatName, sharedAt, parts } = item as unknown as ShareHead;
  return { chatId, shareId, chatName, sharedAt, parts };
};

export class ShareRepository extends Repository {
  /**
   * Makes `head` the chat's live share with these messages: the share stored, and the one it replaced.
   * Steps: write the new parts → put the head (the switch: readers see the old share or the new
   * one, whole) → delete the replaced share's parts.
   */
  async put(
    head: Omit<ShareHead, 'parts'>,
    messages: SharedMessage[],
  ): Promise<{ stored: ShareHead; replaced?: ShareHead }> {
    const parts: SharedMessage[][] = [];
    const packer = new GreedyPacker<SharedMessage>(
      { maxItems: Number.MAX_SAFE_INTEGER, maxWeight: PART_MAX_BYTES },
      (m) => Buffer.byteLength(JSON.stringify(m)),
    );
    for (const m of messages) {
      const closed = packer.add(m);
      if (closed) parts.push(closed);
    }
    const last = packer.flush();
    if (last) parts.push(last);
    await batchWriteAll(
      this.db,
      this.table,
      parts.map((items, i) => ({
        PutRequest: { Item: { ...partKey(head.chatId, head.shareId, i), messages: items } },
      })),
    );
    const out = await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          ...headKey(head.chatId),
          GSI1PK: indexPartition(head.shareId),
          GSI1SK: 'SHARE',
          ...head,
          parts: parts.length,
        },
        ReturnValues: 'ALL_OLD',
      }),
    );
    const replaced = out.Attributes && headOf(out.Attributes);
    if (replaced) await this.deleteParts(replaced);
    return { stored: { ...head, parts: parts.length }, ...(replaced && { replaced }) };
  }

  /** Removes the chat's live share; the one removed, or undefined when there was none. */
  async remove(chatId: string): Promise<ShareHead | undefined> {
    const out = await this.db.send(
      new DeleteCommand({ TableName: this.table, Key: headKey(chatId), ReturnValues: 'ALL_OLD' }),
    );
    const removed = out.Attributes && headOf(out.Attributes);
    if (removed) await this.deleteParts(removed);
    return removed;
  }

  /** Removes a share's head (only while it is still this share) and its parts. */
  async removeShare(head: ShareHead): Promise<void> {
    // Refused when it was replaced or removed meanwhile: that head is not ours to remove.
    await deleteIf(this.db, {
      TableName: this.table,
      Key: headKey(head.chatId),
      ConditionExpression: 'shareId = :id',
      ExpressionAttributeValues: { ':id': head.shareId },
    });
    await this.deleteParts(head);
  }

  /**
   * The live share with this id and its messages, or undefined. The index (eventually consistent)
   * finds the chat; consistent reads of the head and the chat then decide, so a revoked share, a
   * replaced one, or one of a deleted chat (or one being deleted) is never served.
   */
  async find(shareId: string): Promise<{ head: ShareHead; messages: SharedMessage[] } | undefined> {
    const indexed = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk AND GSI1SK = :sk',
        ExpressionAttributeValues: { ':pk': indexPartition(shareId), ':sk': 'SHARE' },
        ProjectionExpression: 'chatId',
      }),
    );
    const chatId = indexed.Items?.[0]?.chatId as string | undefined;
    if (!chatId) return undefined;
    const items = await batchGetAll(this.db, this.table, [headKey(chatId), chatKey(chatId)], { consistentRead: true });
    const head = items.find((i) => i.SK === 'SHARE');
    const chat = items.find((i) => i.SK === 'META');
    if (!head || head.shareId !== shareId || !chat || chat.deleting) return undefined;
    const parts = await queryAll(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': chatPk(chatId), ':prefix': partPrefix(shareId) },
        ConsistentRead: true,
      },
      (item) => item.messages as SharedMessage[],
    );
    // Fewer parts than the head names: the chat's delete is removing them right now.
    if (parts.length !== head.parts) return undefined;
    return { head: headOf(head), messages: parts.flat() };
  }

  private async deleteParts(head: ShareHead): Promise<void> {
    const keys = Array.from({ length: head.parts }, (_, i) => partKey(head.chatId, head.shareId, i));
    await batchWriteAll(
      this.db,
      this.table,
      keys.map((Key) => ({ DeleteRequest: { Key } })),
    );
  }
}
