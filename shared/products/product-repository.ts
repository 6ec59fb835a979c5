import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { decodeCursor, queryPage } from '../http/pagination.ts';
import type { Product } from './schemas.ts';
import { batchGetAll, isConditionFailure } from '../dynamo.ts';

// Products (DESIGN §5). One item per product: PRODUCT#<id> / META, listed by name through
// GSI2 (PRODUCTS / <lower-cased name>#<id>; the id keeps equal names distinct and ordered).
//
// Access patterns: get by id; batch get by ids (order pricing); list by name; create; partial
// update; delete.

const KEY_ATTRIBUTES = ['PK', 'SK', 'GSI2PK', 'GSI2SK'] as const;
const LIST_PARTITION = 'PRODUCTS';

const key = (id: string) => ({ PK: `PRODUCT#${id}`, SK: 'META' });
const listKeys = (p: Pick<Product, 'id' | 'name'>) => ({ GSI2PK: LIST_PARTITION, GSI2SK: `${p.name.toLowerCase()}#${p.id}` });

function toProduct(item: Record<string, unknown>): Product {
  const { id, name, description, priceCents, currency, createdAt, updatedAt } = item as Product;
  return { id, name, description, priceCents, currency, createdAt, updatedAt };
}



export interface Page<T> {
  items: T[];
  lastKey: Record<string, unknown> | undefined;
}

export type ProductChanges = Partial<Pick<Product, 'name' | 'description' | 'priceCents' | 'currency'>>;

export class ProductRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async create(product: Product): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: { ...key(product.id), ...listKeys(product), ...product },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  }

  async get(id: string): Promise<Product | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: key(id) }));
    return out.Item ? toProduct(out.Item) : undefined;
  }

  /** The products that exist among `ids`, by id (strongly consistent: a product just created can be ordered). */
  async getMany(ids: readonly string[]): Promise<Map<string, Product>> {
    const items = await batchGetAll(this.db, this.table, [...new Set(ids)].map(key), { consistentRead: true });
    return new Map(items.map((item) => [item.id as string, toProduct(item)]));
  }

  /** Applies the changes; undefined when there is no such product. */
  async update(id: string, changes: ProductChanges, now: string): Promise<Product | undefined> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':now': now };
    const sets = ['updatedAt = :now'];
    for (const [field, value] of Object.entries(changes)) {
      if (value === undefined) continue;
      names[`#${field}`] = field;
      values[`:${field}`] = value;
      sets.push(`#${field} = :${field}`);
    }
    // The listing key follows the name.
    if (changes.name !== undefined) {
      values[':gsi2sk'] = listKeys({ id, name: changes.name }).GSI2SK;
      sets.push('GSI2SK = :gsi2sk');
    }
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key(id),
          ConditionExpression: 'attribute_exists(PK)',
          UpdateExpression: `SET ${sets.join(', ')}`,
          ...(Object.keys(names).length && { ExpressionAttributeNames: names }),
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toProduct(out.Attributes!);
    } catch (err) {
      if (isConditionFailure(err)) return undefined;
      throw err;
    }
  }

  /** Deletes the product; false when there was none. */
  async delete(id: string): Promise<boolean> {
    try {
      await this.db.send(
        new DeleteCommand({ TableName: this.table, Key: key(id), ConditionExpression: 'attribute_exists(PK)' }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  /** One page of products ordered by name; `cursor` is what the previous page's lastKey encoded to. */
  async listByName(limit: number, cursor: string | undefined): Promise<Page<Product>> {
    const start = decodeCursor(cursor, KEY_ATTRIBUTES, { GSI2PK: LIST_PARTITION });
    const out = await queryPage(
      this.db,
      {
        TableName: this.table,
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': LIST_PARTITION },
        ...(start && { ExclusiveStartKey: start }),
      },
      limit,
      KEY_ATTRIBUTES,
    );
    return { items: out.items.map(toProduct), lastKey: out.lastKey };
  }
}
