import { productRoutes } from '#shared/products/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { pageResponse } from '#shared/http/pagination.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ProductRepository } from '#shared/products/product-repository.ts';
import { listProducts } from '#shared/products/product-service.ts';
import { productListQuery } from '#shared/products/schemas.ts';

// GET /products: any signed-in user; ordered by name, paged.
const deps = { products: new ProductRepository(dynamo(), tableName()) };

export const handler = httpHandler(productRoutes['list-products'], { query: productListQuery }, async ({ query }) =>
  pageResponse(await listProducts(deps, query)),
);
