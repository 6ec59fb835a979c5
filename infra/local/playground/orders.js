// The person's orders: placed from the products an admin made, and paid at the payment provider
// (under npm start, its stand-in) the way a web shop's payment form does it: with the provider's
// publishable key and the order's client secret, never through this service. The provider's
// signed webhook then moves the order.

import { $, POLL_MS, bare, el, pause, showError } from './api.js';
import { refreshUsage } from './account.js';

let paymentProvider; // { apiUrl, publishableKey }, read once from the local pages

const money = (cents, currency) =>
  currency ? new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(cents / 100) : '—';

export async function listOrders() {
  const [products, orders] = await Promise.all([bare('GET', '/products?limit=100'), bare('GET', '/orders?limit=20')]);
  $('no-products').hidden = products.length > 0;
  $('order-form').hidden = products.length === 0;
  $('order-product').replaceChildren(
    ...products.map((p) =>
      el('option', { value: p.id, textContent: `${p.name} (${money(p.priceCents, p.currency)})` }),
    ),
  );
  $('orders').replaceChildren(...orders.map(orderItem));
}

function orderItem(order) {
  const payment = order.payment ? `payment ${order.payment.status.replace('_', ' ')}` : 'no payment';
  const li = el(
    'li',
    {},
    el('span', { textContent: `${money(order.totalCents, order.currency)} · ${order.status} · ${payment}` }),
  );
  li.dataset.orderId = order.id;
  const payable = order.payment?.clientSecret && ['requires_payment', 'failed'].includes(order.payment.status);
  if (payable) {
    const pay = el('button', { type: 'button', className: 'quiet', textContent: 'Pay' });
    const decline = el('button', { type: 'button', className: 'quiet', textContent: 'Pay (declined card)' });
    pay.onclick = () => payOrder(order, 'pm_card_visa').catch((e) => showError('orders-error', e.message));
    decline.onclick = () =>
      payOrder(order, 'pm_card_chargeDeclined').catch((e) => showError('orders-error', e.message));
    li.append(el('span', { className: 'order-actions' }, pay, decline));
  }
  return li;
}

/** POST /orders: the product chosen, in the quantity asked. */
export async function placeOrder() {
  const quantity = Number($('order-quantity').value);
  await bare('POST', '/orders', { items: [{ productId: $('order-product').value, quantity }] });
  await listOrders();
  void refreshUsage();
}

/** Confirms the order's payment at the provider with a test card, then waits for the webhook to move it. */
async function payOrder(order, card) {
  showError('orders-error', '');
  paymentProvider ??= await fetch('/local-payments/config').then((r) => (r.ok ? r.json() : undefined));
  if (!paymentProvider) throw new Error('No payment provider runs here (npm start runs its stand-in).');
  const res = await fetch(`${paymentProvider.apiUrl}/v1/payment_intents/${order.providerPaymentIntentId}/confirm`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${paymentProvider.publishableKey}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ client_secret: order.payment.clientSecret, payment_method: card }),
  });
  const answer = await res.json().catch(() => ({}));
  if (!res.ok && res.status !== 402) throw new Error(answer.error?.message ?? `HTTP ${res.status}`);
  if (res.status === 402) showError('orders-error', `${answer.error?.message ?? 'Declined'} The order stays New.`);
  // The provider posts its signed event to the service: the order changes when it is applied.
  const before = order.payment.status;
  for (let i = 0; i < 30; i++) {
    const now = await bare('GET', `/orders/${order.id}`);
    if (now.payment?.status !== before || res.status === 402) break;
    await pause(POLL_MS);
  }
  await listOrders();
  void refreshUsage(); // a paid order grants its credits
}
