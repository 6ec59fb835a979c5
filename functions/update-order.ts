import { orderRoutes } from '#shared/orders/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { paymentProviderOf } from '#shared/payments/providers.ts';
import { OrderRepository } from '#shared/orders/order-repository.ts';
import { changeOrderStatus } from '#shared/orders/order-service.ts';
import { orderParams, updateOrderBody } from '#shared/orders/schemas.ts';

// PUT /orders/{id} (admin): move the order to another status along the status machine; a
// cancelled order's payment is refunded (or cancelled, unpaid) at the provider.
const deps = {
  orders: new OrderRepository(dynamo(), tableName()),
  clock: systemClock,
  payments: paymentProviderOf(config()),
};

export const handler = httpHandler(
  orderRoutes['update-order'],
  { params: orderParams, body: updateOrderBody },
  ({ params, body, user }) => changeOrderStatus(deps, { id: params.id, status: body.status, user }),
);
