import { productRoutes } from '#shared/products/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ProductRepository } from '#shared/products/product-repository.ts';
import { createProduct } from '#shared/products/product-service.ts';
import { createProductBody } from '#shared/products/schemas.ts';

// POST /products (admin): 201 with the bare product.
const deps = { products: new ProductRepository(dynamo(), tableName()), clock: systemClock };

export const handler = httpHandler(productRoutes['create-product'], { body: createProductBody }, ({ body }) =>
  createProduct(deps, { product: body }),
);
