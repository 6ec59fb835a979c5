import type { Page } from 'playwright-core';
import { type Playground, signInOnPage, startPlayground } from '#test/helpers/browser.ts';
import type { TestApp } from '#test/helpers/app.ts';

// The playground pays an order in a real browser (Debian's chromium, driven by playwright-core):
// an order placed from the page, a declined card, then a card that pays, each confirmed at the
// payment provider's stand-in with its publishable key and the order's client secret (a
// cross-origin call, as a web shop makes it), and the order moved by the provider's webhook.

let app: TestApp;
let playground: Playground;
let page: Page;

beforeAll(async () => {
  ({ app, page } = playground = await startPlayground({ payments: true, env: { ADMIN_EMAILS: 'admin@example.com' } }));
  const admin = await app.signIn('admin@example.com');
  const product = await app.request('POST', '/products', {
    token: admin.token,
    body: { name: 'Reading lamp', priceCents: 2499, currency: 'EUR' },
  });
  expect(product.status).toBe(201);
}, 120_000);
afterAll(() => playground?.close());

test('an order placed, declined, then paid from the playground; the webhook moves it to Processing', async () => {
  await signInOnPage(page, app, 'shopper@example.com');
  await page.locator('#order-product option', { hasText: 'Reading lamp' }).waitFor({ state: 'attached' });

  await page.fill('#order-quantity', '2');
  await page.click('#place-order');
  const row = page.locator('#orders li').first();
  await row.getByText('New · payment requires payment').waitFor();
  expect(await row.textContent()).toMatch(/49[.,]98/);

  await row.getByRole('button', { name: 'Pay (declined card)' }).click();
  await page.locator('#orders-error').getByText('Your card was declined. The order stays New.').waitFor();
  await page.locator('#orders li').first().getByText('New · payment failed').waitFor();

  await page.locator('#orders li').first().getByRole('button', { name: 'Pay', exact: true }).click();
  await page.locator('#orders li').first().getByText('Processing · payment paid').waitFor();
  expect(await page.locator('#orders li').first().getByRole('button').count()).toBe(0);
}, 120_000);
