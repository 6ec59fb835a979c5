import { createId } from '../ids.ts';
import { isoNow, type Clock } from '../clock.ts';
import { NotFoundError } from '../errors.ts';
import type { Page, ProductRepository } from './product-repository.ts';
import type { CreateProductInput, Product, UpdateProductInput } from './schemas.ts';

// Product use cases. Writes are admin-only (the route manifest enforces the role); reads are
// open to any signed-in user.

const notFound = () => new NotFoundError('Product not found');

interface ProductDeps {
  products: ProductRepository;
  clock: Clock;
}
type Reads = Pick<ProductDeps, 'products'>;

/**
 * Creates a product:
 * 1. give it a new id and the creation time;
 * 2. store it (never overwriting another product).
 */
export async function createProduct(
  { products, clock }: ProductDeps,
  { product: input }: { product: CreateProductInput },
): Promise<Product> {
  const now = isoNow(clock);
  const product: Product = { id: createId(), ...input, createdAt: now, updatedAt: now };
  await products.create(product);
  return product;
}

/**
 * Reads one product:
 * 1. load it by id; not found when there is none.
 */
export async function getProduct({ products }: Reads, { id }: { id: string }): Promise<Product> {
  return (await products.get(id)) ?? throwIt(notFound());
}

/**
 * Changes some fields of a product:
 * 1. apply the given fields and a new updatedAt in one conditional write (the product must exist);
 * 2. not found when it does not.
 */
export async function updateProduct(
  { products, clock }: ProductDeps,
  { id, changes }: { id: string; changes: UpdateProductInput },
): Promise<Product> {
  return (await products.update(id, changes, isoNow(clock))) ?? throwIt(notFound());
}

/**
 * Deletes a product:
 * 1. delete it conditionally (it must exist); not found when it does not.
 * Placed orders keep their own copy of the product's name and price.
 */
export async function deleteProduct({ products }: Reads, { id }: { id: string }): Promise<void> {
  if (!(await products.delete(id))) throw notFound();
}

/**
 * Lists products by name:
 * 1. read one page of the name index from the cursor; the next cursor comes back with it.
 */
export function listProducts(
  { products }: Reads,
  { limit, cursor }: { limit: number; cursor?: string },
): Promise<Page<Product>> {
  return products.listByName(limit, cursor);
}

function throwIt(err: Error): never {
  throw err;
}
