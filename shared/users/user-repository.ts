import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Role } from '../auth/service-token.ts';
import { isConditionFailure } from '../dynamo.ts';

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

export interface ProfileFromProvider {
  providerUserId: string;
  email: string;
  verified: boolean;
  name?: string;
  picture: string | null;
  role: Role;
}

const profileKey = (id: string) => ({ PK: `USER#${id}`, SK: 'PROFILE' });
const identityKey = (providerUserId: string) => ({ PK: `IDP#${providerUserId}`, SK: 'IDENTITY' });

function toUser(item: Record<string, unknown>): User {
  const { PK: _pk, SK: _sk, ...user } = item;
  return user as unknown as User;
}

export class UserRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async get(id: string): Promise<User | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: profileKey(id) }));
    return out.Item ? toUser(out.Item) : undefined;
  }

  async userIdForIdentity(providerUserId: string): Promise<string | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: identityKey(providerUserId), ConsistentRead: true }),
    );
    return out.Item?.userId as string | undefined;
  }

  /** Refreshes what the provider owns (name, picture, verified, email) and the role. */
  async refresh(id: string, p: ProfileFromProvider, now: string): Promise<User | undefined> {
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: profileKey(id),
          ConditionExpression: 'attribute_exists(PK)',
          UpdateExpression: `SET email = :email, verified = :verified, picture = :picture, #role = :role, updatedAt = :now${
            p.name !== undefined ? ', #name = :name' : ''
          }`,
          ExpressionAttributeNames: { '#role': 'role', ...(p.name !== undefined && { '#name': 'name' }) },
          ExpressionAttributeValues: {
            ':email': p.email,
            ':verified': p.verified,
            ':picture': p.picture,
            ':role': p.role,
            ':now': now,
            ...(p.name !== undefined && { ':name': p.name }),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toUser(out.Attributes!);
    } catch (err) {
      if (isConditionFailure(err)) return undefined;
      throw err;
    }
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
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: { ...profileKey(id), ...user },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
    return user;
  }

  async deleteProfile(id: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: profileKey(id) }));
  }

  /** Claims an identity for a user; false when another user already holds it. */
  async claimIdentity(providerUserId: string, userId: string): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...identityKey(providerUserId), userId, createdAt: new Date().toISOString() },
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  /** Re-points an identity whose user was deleted at a new user. */
  async repointIdentity(providerUserId: string, fromUserId: string, toUserId: string): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: identityKey(providerUserId),
          ConditionExpression: 'userId = :from',
          UpdateExpression: 'SET userId = :to',
          ExpressionAttributeValues: { ':from': fromUserId, ':to': toUserId },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }
}
