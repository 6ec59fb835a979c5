import { paymentRoutes } from '#shared/payments/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { rawBodyOf } from '#shared/http/raw-body.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { dynamo, sqsClient, tableName } from '#shared/clients.ts';
import { queuedEvents } from '#shared/events/service-events.ts';
import { Credits } from '#shared/limits/credits.ts';
import { OrderRepository } from '#shared/orders/order-repository.ts';
import { receivePaymentWebhook } from '#shared/orders/payment-webhook.ts';
import { paymentsOf } from '#shared/payments/payment-keys.ts';

// POST /payments/webhook: the payment provider's signed events (no sign-in; the signature over
// the raw body is the check). 200 for every verified event, acted upon or ignored.
const deps = {
  orders: new OrderRepository(dynamo(), tableName()),
  clock: systemClock,
  payments: paymentsOf(config()),
  credits: new Credits(dynamo(), tableName()),
  events: queuedEvents(sqsClient(), config().WEBHOOK_QUEUE_URL),
};

export const handler = httpHandler(paymentRoutes['payment-webhook'], {}, async ({ event, headers }) => ({
  data: await receivePaymentWebhook(deps, {
    rawBody: rawBodyOf(event, config().MAX_BODY_BYTES),
    signature: headers['stripe-signature'],
  }),
}));
