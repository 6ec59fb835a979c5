import { GetCommand } from '@aws-sdk/lib-dynamodb';
import {
  batchGetAll,
  deleteIf,
  putNew,
  queryPage,
  Repository,
  updateExpression,
  updateIf,
  type Item,
  type Page,
} from '../dynamo.ts';
import type { Product } from './schemas.ts';

// Products (docs/ARCHITECTURE.md, Access patterns). One item per product: PRODUCT#<id> / META,
// listed by name through GSI2 (PRODUCTS / <lower-cased name>#<id>; the id keeps equal names
// distinct and ordered).
//
// Access patterns: get by id; batch get by ids (order pricing); list by name; create; partial
// update; delete.

const KEY_ATTRIBUTES = ['PK', 'SK', 'GSI2PK', 'GSI2SK'] as const;
const LIST_PARTITION = 'PRODUCTS';

const key = (id: string) => ({ PK: `PRODUCT#${id}`, SK: 'META' });
/** The listing key follows the name. */
const nameSortKey = (p: Pick<Product, 'id' | 'name'>) => `${p.name.toLowerCase()}#${p.id}`;
const toItem = (p: Product): Item => ({ ...key(p.id), GSI2PK: LIST_PARTITION, GSI2SK: nameSortKey(p), ...p });

function fromItem(item: Item): Product {
  const { id, name, description, priceCents, currency, grantsTokens, createdAt, updatedAt } = item as Product;
  const product: Product = { id, name, description, priceCents, currency, createdAt, updatedAt };
  if (grantsTokens !== undefined) product.grantsTokens = grantsTokens;
  return product;
}

export type { Page };

type ProductChanges = Partial<Pick<Product, 'name' | 'description' | 'priceCents' | 'currency' | 'grantsTokens'>>;

export class ProductRepository extends Repository {
  async create(product: Product): Promise<void> {
    await putNew(this.db, { TableName: this.table, Item: toItem(product) });
  }

  async get(id: string): Promise<Product | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: key(id) }));
    return out.Item ? fromItem(out.Item) : undefined;
  }

  /** The products that exist among `ids`, by id (strongly consistent: a product just created can be ordered). */
  async getMany(ids: readonly string[]): Promise<Map<string, Product>> {
    const items = await batchGetAll(this.db, this.table, [...new Set(ids)].map(key), { consistentRead: true });
    return new Map(items.map((item) => [item.id as string, fromItem(item)]));
  }

  /** Applies the changes; undefined when there is no such product. */
  async update(id: string, changes: ProductChanges, now: string): Promise<Product | undefined> {
    const updated = await updateIf(this.db, {
      TableName: this.table,
      Key: key(id),
      ConditionExpression: 'attribute_exists(PK)',
      ...updateExpression({
        ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)),
        updatedAt: now,
        ...(changes.name !== undefined && { GSI2SK: nameSortKey({ id, name: changes.name }) }),
      }),
    });
    return updated && fromItem(updated);
  }

  /** Deletes the product; false when there was none. */
  delete(id: string): Promise<boolean> {
    return deleteIf(this.db, { TableName: this.table, Key: key(id), ConditionExpression: 'attribute_exists(PK)' });
  }

  /** One page of products ordered by name; `cursor` is what the previous page's lastKey encoded to. */
  listByName(limit: number, cursor: string | undefined): Promise<Page<Product>> {
    return queryPage(
      this.db,
      {
        TableName: this.table,
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': LIST_PARTITION },
      },
      { limit, cursor, keyAttributes: KEY_ATTRIBUTES, fixed: { GSI2PK: LIST_PARTITION } },
      fromItem,
    );
  }
}
