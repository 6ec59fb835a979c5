import { orderRoutes } from '#shared/orders/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { OrderRepository } from '#shared/orders/order-repository.ts';
import { getOrder } from '#shared/orders/order-service.ts';
import { orderParams } from '#shared/orders/schemas.ts';

// GET /orders/{id}: the owner or an admin; 404 for anyone else.
const deps = { orders: new OrderRepository(dynamo(), tableName()) };

export const handler = httpHandler(orderRoutes['get-order'], { params: orderParams }, ({ user, params }) =>
  getOrder(deps, { user, id: params.id }),
);
