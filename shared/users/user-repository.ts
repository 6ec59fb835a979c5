import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Role } from '../auth/service-token.ts';
import { apiKeyFromItem, apiKeyItemKey, type ApiKeyRecord } from '../auth/api-key-repository.ts';
import {
  applyIf,
  batchGetAll,
  deleteAll,
  deleteIf,
  putIfAbsent,
  putNew,
  queryPages,
  Repository,
  updateExpression,
  updateIf,
  type Item,
} from '../dynamo.ts';

// Users. Two items per user: the profile (USER#<id> / PROFILE) and an identity claim
// (IDP#<provider user id> / IDENTITY → userId). The claim is written with a condition, so two
// simultaneous first sign-ins of one identity produce exactly one user. A user being erased
// carries `erasing` (the time it was asked) and sits in the sparse GSI2 partition ERASING, where
// the sweep finds erasures still unfinished (docs/DECISIONS.md "Erasure and retention").

export interface User {
  id: string;
  email: string;
  role: Role;
  name?: string;
  address: string | null;
  picture: string | null;
  user_id: string;
  verified: boolean;
  createdAt: string;
  updatedAt: string;
}

interface ProfileFromProvider {
  providerUserId: string;
  email: string;
  verified: boolean;
  name?: string;
  picture: string | null;
  role: Role;
}

const profileKey = (id: string) => ({ PK: `USER#${id}`, SK: 'PROFILE' });
const identityKey = (providerUserId: string) => ({ PK: `IDP#${providerUserId}`, SK: 'IDENTITY' });
const ERASING = 'ERASING';

/** A user whose erasure was asked and is not finished. */
export interface ErasingUser {
  id: string;
  providerUserId: string;
  erasing: string;
}

function fromItem(item: Item): User {
  const { id, email, role, name, address, picture, user_id, verified, createdAt, updatedAt } = item as unknown as User;
  return {
    id,
    email,
    role,
    ...(name !== undefined && { name }),
    address,
    picture,
    user_id,
    verified,
    createdAt,
    updatedAt,
  };
}

export class UserRepository extends Repository {
  /**
   * The user, or undefined when it does not exist or is being erased. Read consistently: a token
   * stops working on the request after DELETE /me, not a replication delay later.
   */
  async get(id: string): Promise<User | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: profileKey(id), ConsistentRead: true }),
    );
    return out.Item && !out.Item.erasing ? fromItem(out.Item) : undefined;
  }

  /**
   * The user (as `get` finds it) and one of the API key records, in one consistent BatchGetItem:
   * a request with a key this instance verified before checks both in one round trip.
   */
  async getWithApiKey(id: string, keyId: string): Promise<{ user?: User; key?: ApiKeyRecord }> {
    const profile = profileKey(id);
    const items = await batchGetAll(this.db, this.table, [profile, apiKeyItemKey(keyId)], { consistentRead: true });
    const profileItem = items.find((item) => item.PK === profile.PK && item.SK === profile.SK);
    const keyItem = items.find((item) => item !== profileItem);
    return {
      ...(profileItem && !profileItem.erasing && { user: fromItem(profileItem) }),
      ...(keyItem && { key: apiKeyFromItem(keyItem) }),
    };
  }

  /**
   * Marks the user as being erased (once: a repeated call keeps the first time) and returns what
   * the erasure needs, or undefined when the profile is already gone.
   */
  async markErasing(id: string, now: string): Promise<ErasingUser | undefined> {
    const updated = await updateIf(this.db, {
      TableName: this.table,
      Key: profileKey(id),
      ConditionExpression: 'attribute_exists(PK)',
      UpdateExpression:
        'SET erasing = if_not_exists(erasing, :now), GSI2PK = :erasing, GSI2SK = if_not_exists(GSI2SK, :sk)',
      ExpressionAttributeValues: { ':now': now, ':erasing': ERASING, ':sk': `${now}#${id}` },
    });
    return updated && { id, providerUserId: updated.user_id as string, erasing: updated.erasing as string };
  }

  /** Erasures asked and not finished, oldest first (the sweep's work). */
  async *erasing(): AsyncGenerator<ErasingUser> {
    const pages = queryPages(this.db, {
      TableName: this.table,
      IndexName: 'GSI2',
      KeyConditionExpression: 'GSI2PK = :erasing',
      ExpressionAttributeValues: { ':erasing': ERASING },
    });
    for await (const items of pages) {
      for (const item of items) {
        yield { id: item.id as string, providerUserId: item.user_id as string, erasing: item.erasing as string };
      }
    }
  }

  /** Removes an identity's claim if it still points at the user: the next sign-in makes a new user. */
  async releaseIdentity(providerUserId: string, userId: string): Promise<void> {
    await deleteIf(this.db, {
      TableName: this.table,
      Key: identityKey(providerUserId),
      ConditionExpression: 'userId = :userId',
      ExpressionAttributeValues: { ':userId': userId },
    });
  }

  /**
   * Deletes everything in the user's own partition, whatever is kept there, the profile last: while
   * it stands, the erasure is unfinished and the sweep finds it.
   */
  async deleteUserPartition(id: string): Promise<void> {
    await deleteAll(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': `USER#${id}` },
        ConsistentRead: true,
      },
      { keep: (k) => k.SK === 'PROFILE' },
    );
    await this.deleteProfile(id);
  }

  async userIdForIdentity(providerUserId: string): Promise<string | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: identityKey(providerUserId), ConsistentRead: true }),
    );
    return out.Item?.userId as string | undefined;
  }

  /** Refreshes what the provider owns (name, picture, verified, email) and the role. */
  async refresh(id: string, p: ProfileFromProvider, now: string): Promise<User | undefined> {
    const updated = await updateIf(this.db, {
      TableName: this.table,
      Key: profileKey(id),
      // A user being erased is not refreshed: its identity signs up afresh (shared/users/sign-in.ts).
      ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(erasing)',
      ...updateExpression({
        email: p.email,
        verified: p.verified,
        picture: p.picture,
        role: p.role,
        updatedAt: now,
        ...(p.name !== undefined && { name: p.name }),
      }),
    });
    return updated && fromItem(updated);
  }

  /** Writes a new profile (never overwrites one). */
  async createProfile(id: string, p: ProfileFromProvider, now: string): Promise<User> {
    const user: User = {
      id,
      email: p.email,
      role: p.role,
      ...(p.name !== undefined && { name: p.name }),
      address: null,
      picture: p.picture,
      user_id: p.providerUserId,
      verified: p.verified,
      createdAt: now,
      updatedAt: now,
    };
    await putNew(this.db, { TableName: this.table, Item: { ...profileKey(id), ...user } });
    return user;
  }

  async deleteProfile(id: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: profileKey(id) }));
  }

  /** Claims an identity for a user; false when another user already holds it. */
  claimIdentity(providerUserId: string, userId: string, now: string): Promise<boolean> {
    return putIfAbsent(this.db, {
      TableName: this.table,
      Item: { ...identityKey(providerUserId), userId, createdAt: now },
    });
  }

  /** Re-points an identity whose user was deleted at a new user. */
  repointIdentity(providerUserId: string, fromUserId: string, toUserId: string): Promise<boolean> {
    return applyIf(this.db, {
      TableName: this.table,
      Key: identityKey(providerUserId),
      ConditionExpression: 'userId = :from',
      UpdateExpression: 'SET userId = :to',
      ExpressionAttributeValues: { ':from': fromUserId, ':to': toUserId },
    });
  }
}
