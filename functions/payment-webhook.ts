import '#shared/config/webhooks.ts';
import { paymentRoutes } from '#shared/payments/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { rawBodyOf } from '#shared/http/raw-body.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { dynamo, sqsClient, tableName } from '#shared/clients.ts';
import { NotFoundError } from '#shared/errors.ts';
import { queuedEvents } from '#shared/events/service-events.ts';
import { Credits } from '#shared/limits/credits.ts';
import { OrderRepository } from '#shared/orders/order-repository.ts';
import { applyPaymentEvent } from '#shared/orders/payment-webhook.ts';
import { paymentProviderOf } from '#shared/payments/providers.ts';

// POST /payments/webhook: the payment provider's signed events (no sign-in; the signature over
// the raw body is the check, the provider's). The provider verifies and translates the delivery,
// the orders domain applies the event; 200 for every verified event, acted upon or ignored.
const provider = paymentProviderOf(config());
const deps = {
  orders: new OrderRepository(dynamo(), tableName()),
  clock: systemClock,
  payments: provider,
  credits: new Credits(dynamo(), tableName()),
  events: queuedEvents(sqsClient(), config().WEBHOOK_QUEUE_URL),
};

export const handler = httpHandler(paymentRoutes['payment-webhook'], {}, async ({ event, headers }) => {
  const rawBody = rawBodyOf(event, config().MAX_BODY_BYTES);
  if (!provider) throw new NotFoundError('This service takes no payments');
  const paymentEvent = await provider.verifyAndTranslate({ headers, rawBody }, deps.clock());
  return applyPaymentEvent(deps, paymentEvent);
});
