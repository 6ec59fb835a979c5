import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { createId } from '../ids.ts';
import {
  applyIf,
  deleteAll,
  deleteIf,
  putIfAbsent,
  putNew,
  queryAll,
  queryPage,
  Repository,
  updateIf,
  type Item,
  type Page,
} from '../dynamo.ts';
import { ConflictError, NotFoundError, ownedBy } from '../errors.ts';
import { userListKeys, userListPage } from '../user-index.ts';

// Collections (docs/ARCHITECTURE.md, Access patterns; docs/DECISIONS.md "Collections"):
//   COLLECTION#<id> / META             the collection: name, owner, fileCount; listed per owner in
//                                      GSI1 (USER#<userId> / COLLECTION#<createdAt>#<id>)
//   COLLECTION#<id> / FILE#<fileId>    a file in it (the file record lists its collectionIds)
//   LIMIT#<userId> / COLLECTIONS       how many collections the user has (the erasure empties LIMIT#)
// No transactions (dynalite has none): each limit is a conditional ADD taken before the write it
// guards and given back when that write does not happen, so a crash between the two can only leave
// a count one too high (a limit a little stricter), never one too low. A collection being deleted
// carries `deleting` and is invisible to every read.

export interface Collection {
  id: string;
  userId: string;
  name: string;
  /** Files in the collection. */
  fileCount: number;
  createdAt: string;
  updatedAt: string;
}

export interface Membership {
  collectionId: string;
  fileId: string;
  addedAt: string;
}

const collectionPk = (id: string) => `COLLECTION#${id}`;
const collectionKey = (id: string) => ({ PK: collectionPk(id), SK: 'META' });
const memberKey = (id: string, fileId: string) => ({ PK: collectionPk(id), SK: `FILE#${fileId}` });
const countKey = (userId: string) => ({ PK: `LIMIT#${userId}`, SK: 'COLLECTIONS' });
const MEMBER_KEY_ATTRIBUTES = ['PK', 'SK'] as const;

export const collectionNotFound = () => new NotFoundError('Collection not found');

function fromItem(item: Item): Collection {
  const { id, userId, name, fileCount, createdAt, updatedAt } = item as unknown as Collection;
  return { id, userId, name, fileCount: Number(fileCount ?? 0), createdAt, updatedAt };
}

function memberFromItem(item: Item): Membership {
  const { collectionId, fileId, addedAt } = item as unknown as Membership;
  return { collectionId, fileId, addedAt };
}

export class CollectionRepository extends Repository {
  /** A new collection of the user's; ConflictError (COLLECTION_LIMIT) when they have `max` already. */
  async create(userId: string, name: string, now: string, max: number): Promise<Collection> {
    const counted = await applyIf(this.db, {
      TableName: this.table,
      Key: countKey(userId),
      UpdateExpression: 'ADD #n :one',
      ConditionExpression: 'attribute_not_exists(#n) OR #n < :max',
      ExpressionAttributeNames: { '#n': 'count' },
      ExpressionAttributeValues: { ':one': 1, ':max': max },
    });
    if (!counted)
      throw new ConflictError(
        `You have ${max} collections, the most one account may have; delete one first`,
        'COLLECTION_LIMIT',
      );
    const collection: Collection = { id: createId(), userId, name, fileCount: 0, createdAt: now, updatedAt: now };
    try {
      await putNew(this.db, {
        TableName: this.table,
        Item: { ...collectionKey(collection.id), ...userListKeys('COLLECTION', collection), ...collection },
      });
    } catch (err) {
      await this.uncount(userId);
      throw err;
    }
    return collection;
  }

  /** The collection, or undefined when it does not exist or is being deleted. */
  async get(id: string): Promise<Collection | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.table, Key: collectionKey(id), ConsistentRead: true }),
    );
    return Item && !Item.deleting ? fromItem(Item) : undefined;
  }

  /** The caller's collection; anyone else's is not found (no existence oracle). */
  async getOwned(id: string, userId: string): Promise<Collection> {
    return ownedBy(await this.get(id), userId, collectionNotFound);
  }

  /** One page of the user's collections, newest first. */
  listByUser(userId: string, page: { limit: number; cursor?: string }): Promise<Page<Collection>> {
    return userListPage(this.db, this.table, userId, 'COLLECTION', page, fromItem, 'attribute_not_exists(deleting)');
  }

  async rename(id: string, userId: string, name: string, now: string): Promise<Collection> {
    const updated = await updateIf(this.db, {
      TableName: this.table,
      Key: collectionKey(id),
      UpdateExpression: 'SET #name = :name, updatedAt = :now',
      ConditionExpression: 'userId = :user AND attribute_not_exists(deleting)',
      ExpressionAttributeNames: { '#name': 'name' },
      ExpressionAttributeValues: { ':name': name, ':now': now, ':user': userId },
    });
    if (!updated) throw collectionNotFound();
    return fromItem(updated);
  }

  /** Whether the file is in the collection (a consistent read). */
  async has(id: string, fileId: string): Promise<boolean> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.table, Key: memberKey(id, fileId), ConsistentRead: true }),
    );
    return Item !== undefined;
  }

  /**
   * Puts the file in the caller's collection: the count first (refused at `max`: COLLECTION_FULL;
   * not the caller's or being deleted: not found), then the membership (already there: the count
   * is given back). True when the file was added, false when it was in already.
   */
  async addMember(collection: Collection, fileId: string, now: string, max: number): Promise<boolean> {
    if (await this.has(collection.id, fileId)) return false;
    const counted = await applyIf(this.db, {
      TableName: this.table,
      Key: collectionKey(collection.id),
      UpdateExpression: 'ADD fileCount :one',
      ConditionExpression: 'userId = :user AND attribute_not_exists(deleting) AND fileCount < :max',
      ExpressionAttributeValues: { ':one': 1, ':max': max, ':user': collection.userId },
    });
    if (!counted) {
      if (!(await this.get(collection.id))) throw collectionNotFound();
      throw new ConflictError(
        `The collection holds ${max} files, the most one may hold; remove one first`,
        'COLLECTION_FULL',
      );
    }
    const added = await putIfAbsent(this.db, {
      TableName: this.table,
      Item: { ...memberKey(collection.id, fileId), collectionId: collection.id, fileId, addedAt: now },
    }).catch(async (err: unknown) => {
      await this.addToCount(collection.id, -1);
      throw err;
    });
    if (!added) await this.addToCount(collection.id, -1);
    return added;
  }

  /** Takes the file out of the collection; true when it was in (its count is then lowered). */
  async removeMember(id: string, fileId: string): Promise<boolean> {
    const out = await this.db.send(
      new DeleteCommand({ TableName: this.table, Key: memberKey(id, fileId), ReturnValues: 'ALL_OLD' }),
    );
    if (!out.Attributes) return false;
    await this.addToCount(id, -1);
    return true;
  }

  /** One page of the collection's files, by file id. */
  listMembers(id: string, page: { limit: number; cursor?: string }): Promise<Page<Membership>> {
    const pk = collectionPk(id);
    return queryPage(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :file)',
        ExpressionAttributeValues: { ':pk': pk, ':file': 'FILE#' },
        ConsistentRead: true,
      },
      { ...page, keyAttributes: MEMBER_KEY_ATTRIBUTES, fixed: { PK: pk }, prefixes: { SK: 'FILE#' } },
      memberFromItem,
    );
  }

  /** Every file id of the collection as it is now (a consistent read: one just added is in). */
  async memberIds(id: string): Promise<string[]> {
    const members = await queryAll(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :file)',
        ExpressionAttributeValues: { ':pk': collectionPk(id), ':file': 'FILE#' },
        ProjectionExpression: 'fileId',
        ConsistentRead: true,
      },
      (item) => item.fileId as string,
    );
    return members;
  }

  /**
   * Marks the caller's collection as being deleted (reads stop seeing it at once); a retried
   * delete of one already marked goes on. Not the caller's, or gone: not found.
   */
  async markDeleting(id: string, userId: string): Promise<void> {
    const marked = await applyIf(this.db, {
      TableName: this.table,
      Key: collectionKey(id),
      UpdateExpression: 'SET deleting = :true',
      ConditionExpression: 'userId = :user',
      ExpressionAttributeValues: { ':true': true, ':user': userId },
    });
    if (!marked) throw collectionNotFound();
  }

  /** Deletes the marked collection's memberships, then its item; the attempt that removed the item uncounts it. */
  async deleteMarked(id: string, userId: string): Promise<void> {
    await deleteAll(this.db, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :file)',
      ExpressionAttributeValues: { ':pk': collectionPk(id), ':file': 'FILE#' },
    });
    const removed = await deleteIf(this.db, {
      TableName: this.table,
      Key: collectionKey(id),
      ConditionExpression: 'attribute_exists(PK)',
    });
    if (removed) await this.uncount(userId);
  }

  /** Moves the file count; a collection deleted meanwhile has nothing to count. */
  private async addToCount(id: string, by: number): Promise<void> {
    await applyIf(this.db, {
      TableName: this.table,
      Key: collectionKey(id),
      UpdateExpression: 'ADD fileCount :by',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':by': by },
    });
  }

  private async uncount(userId: string): Promise<void> {
    await applyIf(this.db, {
      TableName: this.table,
      Key: countKey(userId),
      UpdateExpression: 'ADD #n :minus',
      ConditionExpression: '#n > :zero',
      ExpressionAttributeNames: { '#n': 'count' },
      ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
    });
  }
}
