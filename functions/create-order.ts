import { orderRoutes } from '#shared/orders/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { Credits } from '#shared/limits/credits.ts';
import { paymentProviderOf } from '#shared/payments/providers.ts';
import { OrderRepository } from '#shared/orders/order-repository.ts';
import { ProductRepository } from '#shared/products/product-repository.ts';
import { createOrder } from '#shared/orders/order-service.ts';
import { createOrderBody } from '#shared/orders/schemas.ts';

// POST /orders: an order for the caller, status New, with its payment made at the
// provider (when payments are configured; a free order needs none and is paid at once); 201 with
// the bare order.
const deps = {
  orders: new OrderRepository(dynamo(), tableName()),
  products: new ProductRepository(dynamo(), tableName()),
  clock: systemClock,
  payments: paymentProviderOf(config()),
  credits: new Credits(dynamo(), tableName()),
};

export const handler = httpHandler(orderRoutes['create-order'], { body: createOrderBody }, ({ user, body }) =>
  createOrder(deps, { user, order: body }),
);
