import { productRoutes } from '#shared/products/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ProductRepository } from '#shared/products/product-repository.ts';
import { updateProduct } from '#shared/products/product-service.ts';
import { productParams, updateProductBody } from '#shared/products/schemas.ts';

// PATCH /products/{id} (admin): change the given fields; 200 with the whole product.
const deps = { products: new ProductRepository(dynamo(), tableName()), clock: systemClock };

export const handler = httpHandler(
  productRoutes['update-product'],
  { params: productParams, body: updateProductBody },
  ({ params, body }) => updateProduct(deps, { id: params.id, changes: body }),
);
