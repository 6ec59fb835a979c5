import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { until } from '#test/helpers/until.ts';
import { justCreated } from '#test/helpers/response-bodies.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { payOrder, startPaymentProvider, type PaymentProviderStandIn } from '#infra/local/payment-provider.ts';
import { StripeApi } from '#shared/payments/stripe/api.ts';
import { stripeProvider } from '#shared/payments/stripe/provider.ts';
import { createOrder } from '#shared/orders/order-service.ts';
import { OrderRepository } from '#shared/orders/order-repository.ts';
import type { Order } from '#shared/orders/schemas.ts';
import { ProductRepository } from '#shared/products/product-repository.ts';
import { signatureHeader, verifySignature } from '#shared/payments/stripe/signature.ts';

// Payments through the gateway against the provider's stand-in (its wire protocol, its signed
// webhooks posted to the service): the intent made with the order, paying and declining, the
// webhook's signature checks, events replayed and out of order, refunds on cancel, and an outage
// while an order is placed. Every wait is for an event the stand-in saw acknowledged.

let app: TestApp;
let provider: PaymentProviderStandIn;
let admin: string;
let alice: { token: string; id: string };
let lamp: { id: string };

const PI = /^pi_\w+$/;

beforeAll(async () => {
  app = await startTestApp({ payments: true, env: { ADMIN_EMAILS: 'admin@example.com' } });
  provider = app.paymentProvider!;
  const [a, al] = await Promise.all([app.signIn('admin@example.com'), app.signIn('alice@example.com')]);
  admin = a.token;
  alice = { token: al.token, id: al.user.id };
  const res = await app.request('POST', '/products', {
    token: admin,
    body: { name: 'Lamp', priceCents: 1250, currency: 'EUR' },
  });
  lamp = res.body;
});
afterAll(() => app?.stop());

async function placeOrder(quantity = 1, productId = lamp.id) {
  const res = await app.request('POST', '/orders', {
    token: alice.token,
    body: { items: [{ productId, quantity }] },
  });
  expect(res.status).toBe(201);
  return res.body;
}

const providerApi = () => ({ apiUrl: provider.url, secretKey: provider.secretKey });
const readOrder = async (id: string, token = alice.token) =>
  (await app.request('GET', `/orders/${id}`, { token })).body;

/** The event of `type` about `intentId`, once the service acknowledged it. */
const acknowledged = (type: string, intentId: string) =>
  provider.acknowledged(
    (e: any) => e.type === type && (e.data.object.id === intentId || e.data.object.payment_intent === intentId),
  );
const eventOf = (type: string, intentId: string) =>
  provider.events.find((e) => e.type === type && JSON.parse(e.body).data.object.id === intentId)!;

/** Posts a body to the webhook with the given Stripe-Signature (none: no header). */
const postWebhook = (body: string, signature?: string) =>
  app.request('POST', '/payments/webhook', {
    rawBody: body,
    headers: { 'content-type': 'application/json', ...(signature !== undefined && { 'stripe-signature': signature }) },
  });
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('POST /orders makes the payment intent', () => {
  test('201 with the intent id and the payment; the intent at the provider is for the total, naming the order', async () => {
    const order = await placeOrder(2);
    expect(order.providerPaymentIntentId).toMatch(PI);
    expect(order.payment).toEqual({
      status: 'requires_payment',
      amountCents: 2500,
      currency: 'EUR',
      clientSecret: expect.stringMatching(new RegExp(`^${order.providerPaymentIntentId}_secret_`)),
    });
    const intent = await fetch(`${provider.url}/v1/payment_intents/${order.providerPaymentIntentId}`, {
      headers: { authorization: `Bearer ${provider.secretKey}` },
    }).then((r) => r.json());
    expect(intent).toMatchObject({ amount: 2500, currency: 'eur', metadata: { orderId: order.id } });

    // The client secret is the owner's alone.
    expect(await readOrder(order.id)).toEqual(order);
    const asAdmin = await readOrder(order.id, admin);
    expect(asAdmin.payment).toEqual({ status: 'requires_payment', amountCents: 2500, currency: 'EUR' });
    const listed = (await app.request('GET', '/orders?limit=100', { token: admin })).body;
    expect(listed.find((o: any) => o.id === order.id).payment.clientSecret).toBeUndefined();
  });

  test('a client-supplied providerPaymentIntentId is a 400, and no order is made', async () => {
    const before = (await app.request('GET', '/orders?limit=100', { token: alice.token })).body.length;
    const res = await app.request('POST', '/orders', {
      token: alice.token,
      body: { items: [{ productId: lamp.id, quantity: 1 }], providerPaymentIntentId: 'pi_3MtwBwLkdIwHu7ix28a3tqPa' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: 'body' })]);
    expect(res.body.errors[0].message).toMatch(/providerPaymentIntentId/);
    expect((await app.request('GET', '/orders?limit=100', { token: alice.token })).body).toHaveLength(before);
  });

  test('a provider outage: 503 saying to try again, no order and no intent made', async () => {
    const orders = async () => (await app.request('GET', '/orders?limit=100', { token: alice.token })).body.length;
    const before = await orders();
    const intentsBefore = provider.events.filter((e) => e.type === 'payment_intent.created').length;
    provider.setOutage(500);
    try {
      const res = await app.request('POST', '/orders', {
        token: alice.token,
        body: { items: [{ productId: lamp.id, quantity: 1 }] },
      });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ message: expect.stringMatching(/payment provider.*try again/) });
      expect(res.headers.get('retry-after')).toBe('5');
    } finally {
      provider.setOutage(undefined);
    }
    expect(await orders()).toBe(before);
    expect(provider.events.filter((e) => e.type === 'payment_intent.created')).toHaveLength(intentsBefore);
    // Back up: orders are placed again.
    expect((await placeOrder()).payment.status).toBe('requires_payment');
  });
});

test('the order cannot be stored after its intent was made: the intent is cancelled, so none is left without an order', async () => {
  const made: string[] = [];
  class FailingOrders extends OrderRepository {
    override async linkPayment(paymentId: string, orderId: string) {
      made.push(paymentId);
      await super.linkPayment(paymentId, orderId);
    }
    override async create(_order: Order): Promise<void> {
      throw new Error('the table refused the write');
    }
  }
  const { db } = app.clients();
  const deps = {
    orders: new FailingOrders(db, app.tableName),
    products: new ProductRepository(db, app.tableName),
    clock: () => new Date(),
    payments: stripeProvider({
      apiUrl: provider.url,
      keys: async () => ({ secretKey: provider.secretKey, webhookSecret: provider.webhookSecret }),
      timeoutMs: 60_000, // generous: the stand-in answers, however loaded the machine
    }),
  };
  await expect(
    createOrder(deps, {
      user: { id: alice.id, role: 'user' },
      order: { items: [{ productId: lamp.id, quantity: 1 }] },
    }),
  ).rejects.toThrow('the table refused the write');
  expect(made).toHaveLength(1);
  const intent = await fetch(`${provider.url}/v1/payment_intents/${made[0]}`, {
    headers: { authorization: `Bearer ${provider.secretKey}` },
  }).then((r) => r.json() as Promise<{ status: string }>);
  expect(intent.status).toBe('canceled');
});

describe('the provider refuses', () => {
  test('an amount below its minimum: a 400 the client can act on, and no order', async () => {
    const cheap = await app.request('POST', '/products', {
      token: admin,
      body: { name: 'Sticker', priceCents: 10, currency: 'EUR' },
    });
    const res = await app.request('POST', '/orders', {
      token: alice.token,
      body: { items: [{ productId: cheap.body.id, quantity: 1 }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/payment provider cannot take this amount/);
    const mine = (await app.request('GET', '/orders?limit=100', { token: alice.token })).body;
    expect(mine.some((o: any) => o.items[0].productId === cheap.body.id)).toBe(false);
  });
});

describe('a free order', () => {
  test('the provider refuses an intent for 0 as Stripe does, so a total of 0 makes none: the order is paid and Processing at once', async () => {
    // What the service would otherwise ask: the stand-in answers Stripe's refusal of an amount under 1.
    const zero = await fetch(`${provider.url}/v1/payment_intents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${provider.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'amount=0&currency=eur',
    });
    expect(zero.status).toBe(400);
    expect(await zero.json()).toEqual({
      error: expect.objectContaining({
        type: 'invalid_request_error',
        code: 'parameter_invalid_integer',
        param: 'amount',
        message: 'This value must be greater than or equal to 1.',
      }),
    });

    const free = await app.request('POST', '/products', {
      token: admin,
      body: { name: 'Sample', priceCents: 0, currency: 'EUR' },
    });
    expect(free.status).toBe(201);
    const intentsBefore = provider.events.filter((e) => e.type === 'payment_intent.created').length;
    const order = await placeOrder(3, free.body.id);
    expect(order).toEqual({
      ...justCreated(order),
      userId: alice.id,
      status: 'Processing',
      providerPaymentIntentId: null,
      payment: { status: 'paid', amountCents: 0, currency: 'EUR' },
      items: [{ productId: free.body.id, name: 'Sample', quantity: 3, unitPriceCents: 0, currency: 'EUR' }],
      totalCents: 0,
      currency: 'EUR',
    });
    expect(provider.events.filter((e) => e.type === 'payment_intent.created')).toHaveLength(intentsBefore);
    expect(await readOrder(order.id)).toEqual(order);
    // Processed like a paid order; cancelling it asks the provider for nothing.
    const shipped = await app.request('PUT', `/orders/${order.id}`, { token: admin, body: { status: 'Shipped' } });
    expect(shipped.status).toBe(200);
  });
});

describe('paying', () => {
  test('create and pay: the succeeded event marks the payment paid and moves the order to Processing', async () => {
    const order = await placeOrder();
    const paid = await payOrder(providerApi(), order.id);
    expect(paid).toEqual({ intentId: order.providerPaymentIntentId, status: 'succeeded', declined: false });
    const delivery = await acknowledged('payment_intent.succeeded', order.providerPaymentIntentId);
    expect(JSON.parse(delivery.body)).toMatchObject({ data: { eventId: delivery.eventId, outcome: 'applied' } });
    expect(await readOrder(order.id)).toMatchObject({ status: 'Processing', payment: { status: 'paid' } });
    // Events the service does not act upon are acknowledged and ignored.
    const created = await acknowledged('payment_intent.created', order.providerPaymentIntentId);
    expect(JSON.parse(created.body).data.outcome).toBe('ignored');
  });

  test('a declined card: payment failed, the order stays New; another card then pays it', async () => {
    const order = await placeOrder();
    expect(await payOrder(providerApi(), order.id, { fail: true })).toMatchObject({ declined: true });
    await acknowledged('payment_intent.payment_failed', order.providerPaymentIntentId);
    expect(await readOrder(order.id)).toMatchObject({ status: 'New', payment: { status: 'failed' } });

    await payOrder(providerApi(), order.id);
    await acknowledged('payment_intent.succeeded', order.providerPaymentIntentId);
    expect(await readOrder(order.id)).toMatchObject({ status: 'Processing', payment: { status: 'paid' } });
  });

  test("a browser pays as the playground does: the provider's publishable key and the order's client secret", async () => {
    const order = await placeOrder();
    const config = await fetch(new URL('/local-payments/config', app.url));
    expect(config.status).toBe(200);
    const { apiUrl, publishableKey } = (await config.json()) as { apiUrl: string; publishableKey: string };
    expect(apiUrl).toBe(provider.url);
    expect(publishableKey).toMatch(/^pk_test_/);
    const confirm = (clientSecret: string) =>
      fetch(`${apiUrl}/v1/payment_intents/${order.providerPaymentIntentId}/confirm`, {
        method: 'POST',
        headers: { authorization: `Bearer ${publishableKey}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_secret: clientSecret, payment_method: 'pm_card_visa' }),
      });
    // The publishable key alone pays nothing: another intent's secret is refused, and it makes no intent.
    expect((await confirm(`${order.providerPaymentIntentId}_secret_guessed`)).status).toBe(400);
    const made = await fetch(`${apiUrl}/v1/payment_intents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${publishableKey}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'amount=100&currency=eur',
    });
    expect(made.status).toBe(401);
    const paid = await confirm(order.payment.clientSecret);
    expect(paid.status).toBe(200);
    expect(paid.headers.get('access-control-allow-origin')).toBe('*');
    await acknowledged('payment_intent.succeeded', order.providerPaymentIntentId);
    expect(await readOrder(order.id)).toMatchObject({ status: 'Processing', payment: { status: 'paid' } });
  });

  test('a delivery the service did not acknowledge is retried until it is', async () => {
    const order = await placeOrder();
    provider.setWebhookUrl(`${app.url}/payments/nowhere`); // the gateway answers 404
    await payOrder(providerApi(), order.id);
    const intentId = order.providerPaymentIntentId;
    await until('a refused delivery of payment_intent.succeeded', () =>
      provider.deliveries.some(
        (d) => d.status === 404 && d.eventId === eventOf('payment_intent.succeeded', intentId)?.id,
      ),
    );
    provider.setWebhookUrl(`${app.url}/payments/webhook`);
    await acknowledged('payment_intent.succeeded', intentId);
    expect(await readOrder(order.id)).toMatchObject({ status: 'Processing', payment: { status: 'paid' } });
  });

  test('a replayed event is acknowledged and changes nothing', async () => {
    const order = await placeOrder();
    await payOrder(providerApi(), order.id);
    await acknowledged('payment_intent.succeeded', order.providerPaymentIntentId);
    const before = await readOrder(order.id);
    const replay = await provider.deliver(eventOf('payment_intent.succeeded', order.providerPaymentIntentId).id);
    expect(replay.status).toBe(200);
    expect(JSON.parse(replay.body).data.outcome).toBe('already-applied');
    expect(await readOrder(order.id)).toEqual(before);
  });

  test('a failure delivered after the success never moves the order back', async () => {
    const order = await placeOrder();
    provider.pauseDeliveries();
    try {
      await payOrder(providerApi(), order.id, { fail: true });
      await payOrder(providerApi(), order.id);
      const succeeded = await provider.deliver(eventOf('payment_intent.succeeded', order.providerPaymentIntentId).id);
      expect(JSON.parse(succeeded.body).data.outcome).toBe('applied');
      const failed = await provider.deliver(eventOf('payment_intent.payment_failed', order.providerPaymentIntentId).id);
      expect(failed.status).toBe(200);
      expect(JSON.parse(failed.body).data.outcome).toBe('ignored');
    } finally {
      provider.resumeDeliveries();
    }
    expect(await readOrder(order.id)).toMatchObject({ status: 'Processing', payment: { status: 'paid' } });
  });
});

describe('events in any order', () => {
  /** Refunds an intent at the provider, as the provider's dashboard would. */
  const refundAtProvider = async (intentId: string) => {
    const res = await fetch(`${provider.url}/v1/refunds`, {
      method: 'POST',
      headers: { authorization: `Bearer ${provider.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ payment_intent: intentId }),
    });
    expect(res.status).toBe(200);
  };
  const refundOf = (intentId: string) =>
    provider.events.find(
      (e) => e.type === 'charge.refunded' && JSON.parse(e.body).data.object.payment_intent === intentId,
    )!;
  /** Posts a signed event of `type` about `intentId` (one the stand-in cannot make in this order). */
  const postEvent = (id: string, type: string, intentId: string) => {
    const body = JSON.stringify({
      id,
      object: 'event',
      type,
      data: { object: { id: intentId, object: 'payment_intent' } },
    });
    return postWebhook(body, signatureHeader(body, provider.webhookSecret, nowSeconds()));
  };

  test('a refund delivered before the success wins: the payment ends refunded, as when they come in order', async () => {
    const order = await placeOrder();
    const intentId = order.providerPaymentIntentId;
    provider.pauseDeliveries();
    try {
      await payOrder(providerApi(), order.id);
      await refundAtProvider(intentId);
      const refunded = await provider.deliver(refundOf(intentId).id);
      expect(refunded.status).toBe(200);
      expect(JSON.parse(refunded.body).data.outcome).toBe('applied');
      const succeeded = await provider.deliver(eventOf('payment_intent.succeeded', intentId).id);
      expect(succeeded.status).toBe(200);
      expect(JSON.parse(succeeded.body).data.outcome).toBe('ignored');
      // Replayed, the refund is found applied and the order stays as it is.
      expect(JSON.parse((await provider.deliver(refundOf(intentId).id)).body).data.outcome).toBe('already-applied');
    } finally {
      provider.resumeDeliveries();
    }
    // The same end as success then refund: the order was paid (Processing), its payment is refunded.
    expect(await readOrder(order.id)).toMatchObject({ status: 'Processing', payment: { status: 'refunded' } });
    const shipped = await app.request('PUT', `/orders/${order.id}`, { token: admin, body: { status: 'Shipped' } });
    expect(shipped.status).toBe(409);
  });

  test('a failure or a cancellation delivered after the success never moves the order back; each event id counts once', async () => {
    const order = await placeOrder();
    const intentId = order.providerPaymentIntentId;
    await payOrder(providerApi(), order.id);
    await acknowledged('payment_intent.succeeded', intentId);
    for (const type of ['payment_intent.payment_failed', 'payment_intent.canceled']) {
      const res = await postEvent(`evt_late_${type}_${order.id}`, type, intentId);
      expect(res.status).toBe(200);
      expect(res.body.data.outcome).toBe('ignored');
    }
    expect(await readOrder(order.id)).toMatchObject({ status: 'Processing', payment: { status: 'paid' } });
  });
});

describe('the webhook checks the signature over the raw body', () => {
  let body: string;
  let orderId: string;
  beforeAll(async () => {
    const order = await placeOrder();
    orderId = order.id;
    provider.pauseDeliveries();
    await payOrder(providerApi(), order.id);
    body = eventOf('payment_intent.succeeded', order.providerPaymentIntentId).body;
  });
  afterAll(() => provider.resumeDeliveries());

  const unpaid = async () =>
    expect(await readOrder(orderId)).toMatchObject({ status: 'New', payment: { status: 'requires_payment' } });

  test.each([
    ['no Stripe-Signature', () => [body, undefined]],
    [
      'an altered body',
      () => [
        body.replace('"amount": 1250', '"amount": 1'),
        signatureHeader(body, provider.webhookSecret, nowSeconds()),
      ],
    ],
    [
      'a stale signature (6 minutes old)',
      () => [body, signatureHeader(body, provider.webhookSecret, nowSeconds() - 360)],
    ],
    ['another secret', () => [body, signatureHeader(body, 'whsec_someone_else', nowSeconds())]],
    ['a malformed header', () => [body, 'v1=abc']],
  ])('%s: 400, nothing applied', async (_what, make) => {
    const [sent, signature] = make() as [string, string | undefined];
    const res = await postWebhook(sent, signature);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      statusCode: 400,
      message: expect.stringMatching(/Stripe-Signature/),
      errors: [expect.objectContaining({ path: 'headers.stripe-signature' })],
    });
    await unpaid();
  });

  test('one of several v1 signatures (a secret being rolled) is enough', async () => {
    const t = nowSeconds();
    const wrong = signatureHeader(body, 'whsec_old', t).split(',')[1];
    const res = await postWebhook(body, `${signatureHeader(body, provider.webhookSecret, t)},${wrong}`);
    expect(res.status).toBe(200);
    expect(await readOrder(orderId)).toMatchObject({ status: 'Processing', payment: { status: 'paid' } });
  });
});

describe('cancelling and the status machine', () => {
  test('an unpaid order cannot be moved to Processing or Shipped', async () => {
    const order = await placeOrder();
    const res = await app.request('PUT', `/orders/${order.id}`, { token: admin, body: { status: 'Processing' } });
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/payment is requires_payment, not paid/);
  });

  test('cancelling a paid order refunds it once; the refunded event marks the payment refunded', async () => {
    const order = await placeOrder();
    await payOrder(providerApi(), order.id);
    await acknowledged('payment_intent.succeeded', order.providerPaymentIntentId);

    provider.setOutage(503);
    const failing = await app.request('PUT', `/orders/${order.id}`, { token: admin, body: { status: 'Cancelled' } });
    provider.setOutage(undefined);
    expect(failing.status).toBe(503);
    expect(failing.body.message).toMatch(/refund could not be requested yet; set Cancelled again/);

    const retried = await app.request('PUT', `/orders/${order.id}`, { token: admin, body: { status: 'Cancelled' } });
    expect(retried.status).toBe(200);
    expect(retried.body.payment).toEqual({ status: 'paid', amountCents: 1250, currency: 'EUR' }); // no client secret for the admin
    await acknowledged('charge.refunded', order.providerPaymentIntentId);
    expect(await readOrder(order.id)).toMatchObject({ status: 'Cancelled', payment: { status: 'refunded' } });

    const again = await app.request('PUT', `/orders/${order.id}`, { token: admin, body: { status: 'Cancelled' } });
    expect(again.status).toBe(409);
    const refunds = provider.events.filter(
      (e) =>
        e.type === 'charge.refunded' && JSON.parse(e.body).data.object.payment_intent === order.providerPaymentIntentId,
    );
    expect(refunds).toHaveLength(1);
  });

  test('cancelling an unpaid order cancels its intent, which can then not be paid', async () => {
    const order = await placeOrder();
    const res = await app.request('PUT', `/orders/${order.id}`, { token: admin, body: { status: 'Cancelled' } });
    expect(res.status).toBe(200);
    await acknowledged('payment_intent.canceled', order.providerPaymentIntentId);
    expect(await readOrder(order.id)).toMatchObject({ status: 'Cancelled', payment: { status: 'canceled' } });
    await expect(payOrder(providerApi(), order.id)).rejects.toThrow(/status of canceled/);
  });

  test('a payment that lands after the order was cancelled is refunded', async () => {
    const order = await placeOrder();
    provider.pauseDeliveries();
    try {
      await payOrder(providerApi(), order.id);
      // The intent is paid already: cancelling it at the provider fails, the order is cancelled all the same.
      const cancelled = await app.request('PUT', `/orders/${order.id}`, {
        token: admin,
        body: { status: 'Cancelled' },
      });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ status: 'Cancelled', payment: { status: 'requires_payment' } });
      const succeeded = await provider.deliver(eventOf('payment_intent.succeeded', order.providerPaymentIntentId).id);
      expect(JSON.parse(succeeded.body).data.outcome).toBe('applied');
    } finally {
      provider.resumeDeliveries();
    }
    await acknowledged('charge.refunded', order.providerPaymentIntentId);
    expect(await readOrder(order.id)).toMatchObject({ status: 'Cancelled', payment: { status: 'refunded' } });
  });

  test('the admin list filters by payment status', async () => {
    const paid = await placeOrder();
    await payOrder(providerApi(), paid.id);
    await acknowledged('payment_intent.succeeded', paid.providerPaymentIntentId);
    const unpaid = await placeOrder();
    const list = async (status: string) =>
      (await app.request('GET', `/orders?limit=100&paymentStatus=${status}`, { token: admin })).body.map(
        (o: any) => o.id,
      );
    const paidIds = await list('paid');
    expect(paidIds).toContain(paid.id);
    expect(paidIds).not.toContain(unpaid.id);
    expect(await list('requires_payment')).toContain(unpaid.id);
    const bad = await app.request('GET', '/orders?paymentStatus=maybe', { token: admin });
    expect(bad.status).toBe(400);
  });
});

describe('the stand-in under npm start keeps its state in DATA_DIR', () => {
  test('a restart keeps keys, intents and idempotency keys, and delivers the events it had not delivered', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'payments-state-'));
    try {
      const first = await startPaymentProvider({ dataDir });
      const api = (standIn: PaymentProviderStandIn) =>
        new StripeApi({ baseUrl: standIn.url, secretKey: async () => standIn.secretKey, timeoutMs: 60_000 });
      const input = { amountCents: 1250, currency: 'EUR', orderId: 'o9r4d2e7r1s5t8u3v6w0x4yz', idempotencyKey: 'k-1' };
      const intent = await api(first).createIntent(input);
      await first.close(); // no webhook URL yet: payment_intent.created was never delivered

      const second = await startPaymentProvider({ dataDir });
      try {
        expect([second.secretKey, second.webhookSecret]).toEqual([first.secretKey, first.webhookSecret]);
        expect(await api(second).createIntent(input)).toEqual(intent); // the same key answers the same intent
        // A receiver of its own that checks the signature as the service does (the app's secret is another stand-in's).
        const received: string[] = [];
        const receiver = createServer((req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => {
            const body = Buffer.concat(chunks);
            try {
              verifySignature(body, req.headers['stripe-signature'] as string, second.webhookSecret, nowSeconds());
              received.push(JSON.parse(body.toString('utf8')).type);
              res.writeHead(200).end('{}');
            } catch {
              res.writeHead(400).end('{}');
            }
          });
        });
        await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
        try {
          second.setWebhookUrl(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`);
          await second.acknowledged((e: any) => e.type === 'payment_intent.created' && e.data.object.id === intent.id);
          expect(received).toEqual(['payment_intent.created']);
        } finally {
          receiver.closeAllConnections();
          await new Promise((resolve) => receiver.close(resolve));
        }
      } finally {
        await second.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
