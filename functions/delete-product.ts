import { productRoutes } from '#shared/products/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ProductRepository } from '#shared/products/product-repository.ts';
import { deleteProduct } from '#shared/products/product-service.ts';
import { productParams } from '#shared/products/schemas.ts';

// DELETE /products/{id} (admin): 204 without a body.
const deps = { products: new ProductRepository(dynamo(), tableName()) };

export const handler = httpHandler(productRoutes['delete-product'], { params: productParams }, async ({ params }) => {
  await deleteProduct(deps, { id: params.id });
});
