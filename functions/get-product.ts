import { productRoutes } from '#shared/products/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ProductRepository } from '#shared/products/product-repository.ts';
import { getProduct } from '#shared/products/product-service.ts';
import { productParams } from '#shared/products/schemas.ts';

// GET /products/{id}: any signed-in user.
const deps = { products: new ProductRepository(dynamo(), tableName()) };

export const handler = httpHandler(productRoutes['get-product'], { params: productParams }, ({ params }) =>
  getProduct(deps, { id: params.id }),
);
