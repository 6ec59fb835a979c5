import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { payOrder, type PaymentProviderStandIn } from '#infra/local/payment-provider.ts';
import { tokenCounter, utcDay } from '#shared/limits/user-limits.ts';
import { UsageCounters } from '#shared/limits/usage-counters.ts';
import { useTestApp } from '#test/helpers/app.ts';
import { fixturePdf } from '#test/helpers/make-pdf.ts';
import { until } from '#test/helpers/until.ts';

// Credits through the gateway against the payment provider's stand-in: a product that grants
// tokens, its order paid (credits granted once, whatever the replays), the credits used once the
// day's budget is spent, and the refund that takes back what is left of them.

const BUDGET = 50_000;
const GRANTS = 4_000;

let provider: PaymentProviderStandIn;
let admin: string;
let counters: UsageCounters;
let people = 0;

const app = useTestApp(
  async () => ({
    model: 'openai',
    pdfs: { '/hello.pdf': { body: await fixturePdf('hello-world.pdf') } },
    payments: true,
    env: { ADMIN_EMAILS: 'admin@example.com', DAILY_TOKEN_BUDGET: String(BUDGET) },
  }),
  {
    ready: async (app) => {
      provider = app.paymentProvider!;
      admin = (await app.signIn('admin@example.com')).token;
      counters = new UsageCounters(app.clients().db, app.tableName);
    },
  },
);

const person = () => app.signIn(`buyer-${++people}@example.com`);
const providerApi = () => ({ apiUrl: provider.url, secretKey: provider.secretKey });
const budgetOf = async (token: string) => (await app.request('GET', '/me', { token })).body.data.usage.budget;
const acknowledged = (type: string, intentId: string) =>
  provider.acknowledged(
    (e: any) => e.type === type && (e.data.object.id === intentId || e.data.object.payment_intent === intentId),
  );
const eventOf = (type: string, intentId: string) =>
  provider.events.find((e) => {
    const object = JSON.parse(e.body).data.object;
    return e.type === type && (object.id === intentId || object.payment_intent === intentId);
  })!;
/** Spends the rest of the user's budget for today, as replies would have. */
const spendToday = (userId: string) =>
  counters.add({ subject: userId, counter: tokenCounter(utcDay(Date.now())) }, BUDGET);
const prompt = async (token: string) => {
  const chat = await app.request('POST', '/chat', { token, body: { name: 'Credits', type: 'text' } });
  return app.request('POST', '/message/logged-in', { token, body: { chatId: chat.body.data.id, prompt: 'Hello' } });
};

async function newProduct(grantsTokens?: number) {
  const res = await app.request('POST', '/products', {
    token: admin,
    body: { name: 'Token pack', priceCents: 500, currency: 'EUR', grantsTokens },
  });
  expect(res.status).toBe(201);
  return res.body;
}

async function buy(token: string, productId: string, quantity: number) {
  const order = (await app.request('POST', '/orders', { token, body: { items: [{ productId, quantity }] } })).body;
  await payOrder(providerApi(), order.id);
  await acknowledged('payment_intent.succeeded', order.providerPaymentIntentId);
  return order;
}

test('grantsTokens: shown on the product, changed by an update; a negative or fractional one is a 400', async () => {
  const pack = await newProduct(GRANTS);
  expect(pack.grantsTokens).toBe(GRANTS);
  const updated = await app.request('PATCH', `/products/${pack.id}`, { token: admin, body: { grantsTokens: 10 } });
  expect(updated.body).toMatchObject({ grantsTokens: 10 });
  expect((await app.request('GET', `/products/${pack.id}`, { token: admin })).body.grantsTokens).toBe(10);
  for (const bad of [-1, 1.5, '100']) {
    const res = await app.request('POST', '/products', {
      token: admin,
      body: { name: 'Bad pack', priceCents: 500, currency: 'EUR', grantsTokens: bad },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toEqual(expect.any(String));
  }
  expect((await newProduct()).grantsTokens).toBeUndefined();
});

test('a paid order grants grantsTokens × quantity once, whatever the replays; they are used once the day is spent', async () => {
  const buyer = await person();
  const pack = await newProduct(GRANTS);
  const order = await buy(buyer.token, pack.id, 3);
  expect(order.items[0].grantsTokens).toBe(GRANTS);
  expect(await budgetOf(buyer.token)).toMatchObject({ creditsGranted: 3 * GRANTS, creditsLeft: 3 * GRANTS });

  const replay = await provider.deliver(eventOf('payment_intent.succeeded', order.providerPaymentIntentId).id);
  expect(JSON.parse(replay.body).data.outcome).toBe('already-applied');
  expect(await budgetOf(buyer.token)).toMatchObject({ creditsGranted: 3 * GRANTS, creditsLeft: 3 * GRANTS });

  // Within the day's budget, replies do not touch the credits.
  expect((await prompt(buyer.token)).status).toBe(200);
  expect((await budgetOf(buyer.token)).creditsLeft).toBe(3 * GRANTS);

  await spendToday(buyer.user.id);
  const paidFor = await prompt(buyer.token);
  expect(paidFor.status).toBe(200);
  const budget = await budgetOf(buyer.token);
  expect(budget.leftToday).toBe(0);
  expect(budget.creditsLeft).toBe(3 * GRANTS - paidFor.body.data.usage.totalTokens);
  expect(budget.left).toBe(budget.creditsLeft);

  // Without credits, the same spent day refuses.
  const other = await person();
  await spendToday(other.user.id);
  const refused = await prompt(other.token);
  expect(refused.status).toBe(429);
  expect(refused.body.message).toMatch(/daily token budget/);
});

test('an ingestion is admitted on credits once the day is spent, and its embeddings are drawn from them', async () => {
  const buyer = await person();
  const pack = await newProduct(GRANTS);
  await buy(buyer.token, pack.id, 1);
  await spendToday(buyer.user.id);
  const upload = await app.request('POST', '/upload', {
    token: buyer.token,
    body: { fileName: 'hello.pdf', contentType: 'application/pdf', size: 4000 },
  });
  const fileId = upload.body.data.fileId;
  const res = await app.request('POST', '/message/pdf', {
    token: buyer.token,
    body: { url: `${app.pdfs.url}/hello.pdf`, fileId },
  });
  expect(res.status).toBe(200);
  const { tokens } = res.body.data.embeddingsData;
  expect(tokens).toBeGreaterThan(0);
  expect((await budgetOf(buyer.token)).creditsLeft).toBe(GRANTS - tokens);
});

test('a delivery that moved the order but died before the grant is completed by the next delivery, once', async () => {
  const buyer = await person();
  const pack = await newProduct(GRANTS);
  const order = await buy(buyer.token, pack.id, 2);
  // As if the function had died between the order's move and the grant: the credits item lost it.
  await app
    .clients()
    .db.send(new DeleteCommand({ TableName: app.tableName, Key: { PK: `LIMIT#${buyer.user.id}`, SK: 'CREDITS' } }));
  expect(await budgetOf(buyer.token)).toMatchObject({ creditsGranted: 0, creditsLeft: 0 });

  const event = eventOf('payment_intent.succeeded', order.providerPaymentIntentId).id;
  const retried = await provider.deliver(event);
  expect(JSON.parse(retried.body).data.outcome).toBe('already-applied');
  expect(await budgetOf(buyer.token)).toMatchObject({ creditsGranted: 2 * GRANTS, creditsLeft: 2 * GRANTS });
  await provider.deliver(event);
  expect(await budgetOf(buyer.token)).toMatchObject({ creditsGranted: 2 * GRANTS, creditsLeft: 2 * GRANTS });
});

test('a refund takes back what is left of the order’s credits, never below zero, once', async () => {
  const buyer = await person();
  const pack = await newProduct(GRANTS);
  const kept = await buy(buyer.token, pack.id, 1);
  const refunded = await buy(buyer.token, pack.id, 1);
  expect(await budgetOf(buyer.token)).toMatchObject({ creditsGranted: 2 * GRANTS, creditsLeft: 2 * GRANTS });

  // Some credits used: the day spent, one reply paid from them.
  await spendToday(buyer.user.id);
  const reply = await prompt(buyer.token);
  expect(reply.status).toBe(200);
  const used = reply.body.data.usage.totalTokens as number;

  const cancel = await app.request('PUT', `/orders/${refunded.id}`, { token: admin, body: { status: 'Cancelled' } });
  expect(cancel.status).toBe(200);
  await acknowledged('charge.refunded', refunded.providerPaymentIntentId);
  const after = await budgetOf(buyer.token);
  expect(after).toMatchObject({ creditsGranted: GRANTS, creditsLeft: GRANTS - used });

  const replay = await provider.deliver(eventOf('charge.refunded', refunded.providerPaymentIntentId).id);
  expect(replay.status).toBe(200);
  expect(await budgetOf(buyer.token)).toEqual(after);

  // The other order refunded too: what is left goes, the pool stops at zero (the tokens used stay used).
  await app.request('PUT', `/orders/${kept.id}`, { token: admin, body: { status: 'Cancelled' } });
  await acknowledged('charge.refunded', kept.providerPaymentIntentId);
  expect(await budgetOf(buyer.token)).toMatchObject({ creditsGranted: 0, creditsLeft: 0, left: 0 });
  expect((await prompt(buyer.token)).status).toBe(429);
});

test('a refund delivered before the success: nothing is granted, the late success grants nothing', async () => {
  const buyer = await person();
  const pack = await newProduct(GRANTS);
  const order = (
    await app.request('POST', '/orders', { token: buyer.token, body: { items: [{ productId: pack.id, quantity: 1 }] } })
  ).body;
  const intentId = order.providerPaymentIntentId;
  provider.pauseDeliveries();
  try {
    await payOrder(providerApi(), order.id);
    const refund = await fetch(`${provider.url}/v1/refunds`, {
      method: 'POST',
      headers: { authorization: `Bearer ${provider.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ payment_intent: intentId }),
    });
    expect(refund.status).toBe(200);
    await provider.deliver(eventOf('charge.refunded', intentId).id);
    const late = await provider.deliver(eventOf('payment_intent.succeeded', intentId).id);
    expect(late.status).toBe(200);
    // Read before the paused deliveries go out (the refund's own retry must not be what fixes it).
    expect(await budgetOf(buyer.token)).toMatchObject({ creditsGranted: 0, creditsLeft: 0 });
  } finally {
    provider.resumeDeliveries();
  }
});

/**
 * Starts a reply on credits and holds it at the model; `whileHeld` runs, then the reply ends. The
 * tokens it reserved and the tokens it used.
 */
async function replyAround(buyer: { token: string }, whileHeld: (reserved: number) => Promise<void>) {
  const before = (await budgetOf(buyer.token)).creditsLeft;
  const chatRequests = app.ai.count('/v1/chat/completions');
  const release = app.ai.holdNext({ only: 'chat' });
  const reply = prompt(buyer.token);
  await until('the reply at the model', () => app.ai.count('/v1/chat/completions') > chatRequests);
  const reserved = before - (await budgetOf(buyer.token)).creditsLeft;
  await whileHeld(reserved);
  release();
  const answered = await reply;
  expect(answered.status).toBe(200);
  return { reserved, used: answered.body.data.usage.totalTokens as number };
}

async function refund(order: { id: string; providerPaymentIntentId: string }) {
  const cancel = await app.request('PUT', `/orders/${order.id}`, { token: admin, body: { status: 'Cancelled' } });
  expect(cancel.status).toBe(200);
  await acknowledged('charge.refunded', order.providerPaymentIntentId);
}

test('a reply that reserved credits settles after its order was refunded in full: nothing comes back', async () => {
  const buyer = await person();
  const order = await buy(buyer.token, (await newProduct(GRANTS)).id, 1);
  await spendToday(buyer.user.id);
  const { reserved } = await replyAround(buyer, async (held) => {
    expect(held).toBeGreaterThan(0);
    await refund(order);
    expect(await budgetOf(buyer.token)).toMatchObject({ creditsGranted: 0, creditsLeft: 0 });
  });
  expect(reserved).toBeLessThan(GRANTS);
  expect(await budgetOf(buyer.token)).toMatchObject({ creditsGranted: 0, creditsLeft: 0 });
});

test('a reply held while another order is refunded: what it did not use first makes up what the refund could not take', async () => {
  const buyer = await person();
  const small = 300;
  const kept = await buy(buyer.token, (await newProduct(small)).id, 1);
  const refunded = await buy(buyer.token, (await newProduct(GRANTS)).id, 1);
  expect(kept.items[0].grantsTokens).toBe(small);
  await spendToday(buyer.user.id);
  const { reserved, used } = await replyAround(buyer, () => refund(refunded));
  expect(reserved).toBeGreaterThan(small); // the refund found less left than its order granted
  const after = await budgetOf(buyer.token);
  expect(after.creditsGranted).toBe(small);
  expect(after.creditsLeft).toBe(Math.max(0, small - used));
  expect(used).toBeLessThan(small);
});

test('a free product: its order is paid as it is placed, without an intent, and grants its tokens once', async () => {
  const buyer = await person();
  const free = await app.request('POST', '/products', {
    token: admin,
    body: { name: 'Trial tokens', priceCents: 0, currency: 'EUR', grantsTokens: GRANTS },
  });
  expect(free.status).toBe(201);
  const res = await app.request('POST', '/orders', {
    token: buyer.token,
    body: { items: [{ productId: free.body.id, quantity: 2 }] },
  });
  expect(res.status).toBe(201);
  expect(res.body).toMatchObject({
    status: 'Processing',
    providerPaymentIntentId: null,
    payment: { status: 'paid', amountCents: 0, currency: 'EUR' },
  });
  expect(await budgetOf(buyer.token)).toMatchObject({ creditsGranted: 2 * GRANTS, creditsLeft: 2 * GRANTS });
});
