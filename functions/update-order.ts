import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { OrderRepository } from '#shared/orders/order-repository.ts';
import { changeOrderStatus } from '#shared/orders/order-service.ts';
import { orderParams, updateOrderBody } from '#shared/orders/schemas.ts';

// PUT /orders/{id} (admin): move the order to another status along the status machine.
const deps = { orders: new OrderRepository(dynamo(), tableName()), clock: systemClock };

export const handler = httpHandler(
  httpRoutes['update-order'],
  { params: orderParams, body: updateOrderBody },
  async ({ params, body }) => ({ data: await changeOrderStatus(deps, { id: params.id, status: body.status }) }),
);
