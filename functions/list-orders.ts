import { orderRoutes } from '#shared/orders/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { pageResponse } from '#shared/http/pagination.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { OrderRepository } from '#shared/orders/order-repository.ts';
import { listOrders } from '#shared/orders/order-service.ts';
import { orderListQuery } from '#shared/orders/schemas.ts';

// GET /orders: every order for an admin, the caller's own otherwise; newest first, paged.
const deps = { orders: new OrderRepository(dynamo(), tableName()) };

export const handler = httpHandler(orderRoutes['list-orders'], { query: orderListQuery }, async ({ user, query }) =>
  pageResponse(await listOrders(deps, { user, ...query })),
);
