import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { deleteIf, putNew, queryAll, Repository, updateIf, type Item, type Page } from '../dynamo.ts';
import { userListKeys, userListPage } from '../user-index.ts';
import type { ApiKeyScope } from './api-key-scopes.ts';

// API keys (docs/DECISIONS.md "API keys"). One item per key, `APIKEY#<id>` / `META`, holding the
// SHA-256 of the key (never the key), its owner, scopes and expiry; listed in the owner's GSI1
// partition (`USER#<userId>` / `APIKEY#<createdAt>#<id>`). A revoked key is deleted: the next
// consistent read of it finds nothing.

export interface ApiKeyRecord {
  id: string;
  userId: string;
  name: string;
  scopes: ApiKeyScope[];
  /** Hex SHA-256 of the whole key. */
  hash: string;
  createdAt: string;
  /** Null: never expires. */
  expiresAt: string | null;
  lastUsedAt: string | null;
}

/** The key item's table key. */
export const apiKeyItemKey = (id: string) => ({ PK: `APIKEY#${id}`, SK: 'META' });
const keyOf = apiKeyItemKey;

/** A key item as its record. */
export function apiKeyFromItem(item: Item): ApiKeyRecord {
  const { id, userId, name, scopes, hash, createdAt, expiresAt, lastUsedAt } = item as unknown as ApiKeyRecord;
  return {
    id,
    userId,
    name,
    scopes: [...scopes],
    hash,
    createdAt,
    expiresAt: expiresAt ?? null,
    lastUsedAt: lastUsedAt ?? null,
  };
}

export class ApiKeyRepository extends Repository {
  async create(record: ApiKeyRecord): Promise<void> {
    // Absent rather than null: `touch` compares lastUsedAt, and an expiry-less key has no expiresAt.
    const { expiresAt, lastUsedAt, ...kept } = record;
    await putNew(this.db, {
      TableName: this.table,
      Item: {
        ...keyOf(record.id),
        ...userListKeys('APIKEY', record),
        ...kept,
        ...(expiresAt !== null && { expiresAt }),
        ...(lastUsedAt !== null && { lastUsedAt }),
      },
    });
  }

  /** The key's record, read consistently: a key revoked a moment ago is not found. */
  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: keyOf(id), ConsistentRead: true }));
    return out.Item ? apiKeyFromItem(out.Item) : undefined;
  }

  /** One page of the user's keys, newest first (GET /me/api-keys). */
  listPage(userId: string, page: { limit: number; cursor?: string | undefined }): Promise<Page<ApiKeyRecord>> {
    return userListPage(this.db, this.table, userId, 'APIKEY', page, apiKeyFromItem);
  }

  /** All the user's keys, newest first (at most API_KEYS_MAX_PER_USER). */
  list(userId: string): Promise<ApiKeyRecord[]> {
    return queryAll(
      this.db,
      {
        TableName: this.table,
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :kind)',
        ExpressionAttributeValues: { ':pk': `USER#${userId}`, ':kind': 'APIKEY#' },
        ScanIndexForward: false,
      },
      apiKeyFromItem,
    );
  }

  /** Deletes the user's key; false when there is no such key of theirs. */
  revoke(id: string, userId: string): Promise<boolean> {
    return deleteIf(this.db, {
      TableName: this.table,
      Key: keyOf(id),
      ConditionExpression: 'userId = :userId',
      ExpressionAttributeValues: { ':userId': userId },
    });
  }

  /** Records a use, unless one at or after `since` is recorded already (a key in use writes once a minute at most). */
  async touch(id: string, now: string, since: string): Promise<void> {
    await updateIf(this.db, {
      TableName: this.table,
      Key: keyOf(id),
      ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(lastUsedAt) OR lastUsedAt < :since)',
      UpdateExpression: 'SET lastUsedAt = :now',
      ExpressionAttributeValues: { ':now': now, ':since': since },
      ReturnValues: 'NONE',
    });
  }
}
