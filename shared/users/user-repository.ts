import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Role } from '../auth/service-token.ts';
import { applyIf, putIfAbsent, putNew, Repository, updateExpression, updateIf, type Item } from '../dynamo.ts';

// Users. Two items per user: the profile (USER#<id> / PROFILE) and an identity claim
// (IDP#<provider user id> / IDENTITY → userId). The claim is written with a condition, so two
// simultaneous first sign-ins of one identity produce exactly one user.

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
  async get(id: string): Promise<User | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: profileKey(id) }));
    return out.Item ? fromItem(out.Item) : undefined;
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
      ConditionExpression: 'attribute_exists(PK)',
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
