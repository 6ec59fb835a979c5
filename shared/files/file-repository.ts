import { DeleteCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { applyIf, batchGetAll, putNew, queryAll, updateExpression, type Page } from '../dynamo.ts';
import { userListPage } from '../user-index.ts';
import { fileKey, fromItem, hashPk, hashSkPrefix, INGESTING, toItem } from './file-item.ts';
import {
  isDeletedFile,
  RETIRED_RUN_PREFIX,
  type CompletedFile,
  type FileRecord,
  type UploadedFile,
} from './file-record.ts';
import { FileRuns } from './file-runs.ts';

// File records (the record: file-record.ts; its item and keys: file-item.ts): created at upload,
// read, attached to chats and collections, retired and deleted. An ingestion run's writes are
// FileRuns' (file-runs.ts), which this repository extends, so callers hold one repository.

/** A string set of the record the file's chats and collections are noted in. */
type Membership = 'chatIds' | 'collectionIds';

/** Adds `member` to, or deletes it from, the set `set` of a record that exists. */
const changeMembership = (id: string, action: 'ADD' | 'DELETE', set: Membership, member: string) => ({
  Key: fileKey(id),
  UpdateExpression: `${action} #set :member`,
  ConditionExpression: 'attribute_exists(PK)',
  ExpressionAttributeNames: { '#set': set },
  ExpressionAttributeValues: { ':member': new Set([member]) },
});

export class FileRepository extends FileRuns {
  async create(record: UploadedFile): Promise<void> {
    await putNew(this.db, { TableName: this.table, Item: toItem(record) });
  }

  async get(id: string): Promise<FileRecord | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.table, Key: fileKey(id), ConsistentRead: true }),
    );
    return Item && fromItem(Item);
  }

  /** One page of the user's files, newest first (GET /upload). The cursor is checked to be this user's. */
  listByUser(userId: string, options: { limit: number; cursor?: string }): Promise<Page<FileRecord>> {
    return userListPage(this.db, this.table, userId, 'FILE', options, fromItem);
  }

  /** Several records at once (retrieval); missing ids are left out. */
  async getMany(ids: string[]): Promise<FileRecord[]> {
    return (await batchGetAll(this.db, this.table, ids.map(fileKey))).map(fromItem);
  }

  /**
   * Which of these files are gone or being deleted (consistent reads, so a delete that has begun
   * is seen at once): what a share may no longer show of them.
   */
  async deletedAmong(ids: string[]): Promise<Set<string>> {
    const unique = [...new Set(ids)];
    const found = (await batchGetAll(this.db, this.table, unique.map(fileKey), { consistentRead: true })).map(fromItem);
    const kept = new Set(found.filter((r) => !isDeletedFile(r)).map((r) => r.id));
    return new Set(unique.filter((id) => !kept.has(id)));
  }

  /** The multipart upload `uploadId` was completed: the record forgets it. False when it was not the open one. */
  endMultipart(id: string, uploadId: string): Promise<boolean> {
    return applyIf(this.db, {
      TableName: this.table,
      Key: fileKey(id),
      UpdateExpression: 'REMOVE #upload',
      ConditionExpression: '#upload = :upload',
      ExpressionAttributeNames: { '#upload': 'multipartUploadId' },
      ExpressionAttributeValues: { ':upload': uploadId },
    });
  }

  /** Remembers a chat the file is attached to (so deleting the file can detach it). */
  async addChat(id: string, chatId: string): Promise<void> {
    await this.db.send(new UpdateCommand({ TableName: this.table, ...changeMembership(id, 'ADD', 'chatIds', chatId) }));
  }

  /** Notes that the file is in a collection; false when the record is gone. */
  addCollection(id: string, collectionId: string): Promise<boolean> {
    return applyIf(this.db, { TableName: this.table, ...changeMembership(id, 'ADD', 'collectionIds', collectionId) });
  }

  /** Notes that the file left a collection (a record already gone has nothing to note). */
  async removeCollection(id: string, collectionId: string): Promise<void> {
    await applyIf(this.db, {
      TableName: this.table,
      ...changeMembership(id, 'DELETE', 'collectionIds', collectionId),
    });
  }

  /** Ends any run before the file is deleted: messages still in flight then change nothing. */
  async retire(id: string, now: string): Promise<void> {
    // A record that is already gone has nothing to retire.
    await applyIf(this.db, {
      TableName: this.table,
      Key: fileKey(id),
      ...updateExpression({ status: 'failed', runId: `${RETIRED_RUN_PREFIX}${now}`, updatedAt: now }, [
        'GSI2PK',
        'GSI2SK',
      ]),
      ConditionExpression: 'attribute_exists(PK)',
    });
  }

  /** Deletes the record; false when it was already gone (another attempt deleted it). */
  async delete(id: string): Promise<boolean> {
    const out = await this.db.send(
      new DeleteCommand({ TableName: this.table, Key: fileKey(id), ReturnValues: 'ALL_OLD' }),
    );
    return out.Attributes !== undefined;
  }

  /** Every record in processing (restart recovery). */
  listProcessing(): Promise<FileRecord[]> {
    return queryAll(
      this.db,
      {
        TableName: this.table,
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': INGESTING },
      },
      fromItem,
    );
  }

  /**
   * A completed file of the user with the same bytes and chunker, whatever its embedding model:
   * its chunks are what extracting (and recognising) these bytes again would give.
   */
  async findExtracted(userId: string, sha256: string, chunker: string, exceptId: string) {
    const found = await this.completedWithHash(userId, sha256, exceptId, { limit: 20 });
    return found.find((f) => f.chunker === chunker);
  }

  /** A completed file of the user with the same bytes, embedding model and chunker. */
  async findReusable(
    userId: string,
    sha256: string,
    model: string,
    chunker: string,
    exceptId: string,
  ): Promise<CompletedFile | undefined> {
    const found = await this.completedWithHash(userId, sha256, exceptId, {
      limit: 10,
      prefix: hashSkPrefix(model, chunker),
    });
    return found.find((f) => !!f.vectorsKey);
  }

  /**
   * The user's completed files of these bytes but `exceptId`, newest first, among the `limit`
   * newest entries of their hash (`prefix`: of one embedding model and chunker).
   */
  private async completedWithHash(
    userId: string,
    sha256: string,
    exceptId: string,
    { limit, prefix }: { limit: number; prefix?: string },
  ): Promise<CompletedFile[]> {
    const res = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: 'GSI2',
        KeyConditionExpression: prefix ? 'GSI2PK = :pk AND begins_with(GSI2SK, :prefix)' : 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': hashPk(userId, sha256), ...(prefix && { ':prefix': prefix }) },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return (res.Items ?? [])
      .map(fromItem)
      .filter((f): f is CompletedFile => f.id !== exceptId && f.status === 'completed' && f.userId === userId);
  }
}
