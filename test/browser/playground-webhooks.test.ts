import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { type Playground, signInOnPage, startPlayground } from '#test/helpers/browser.ts';
import type { TestApp } from '#test/helpers/app.ts';
import { until } from '#test/helpers/until.ts';

// The playground's webhooks panel in a real browser, against a loopback receiver: an endpoint
// made from the page shows its secret once (never in the list), a ping arrives signed with that
// secret and shows delivered in the endpoint's delivery log, and Delete removes the endpoint.

let app: TestApp;
let playground: Playground;
let page: Page;

beforeAll(async () => {
  ({ app, page } = playground = await startPlayground({ webhooks: true }));
}, 120_000);
afterAll(() => playground?.close());

test('an endpoint made in the panel shows its secret once, is pinged, logs the delivery and is deleted', async () => {
  await signInOnPage(page, app, 'hooks-panel@example.com');

  // No event chosen: refused on the page, nothing created.
  await page.fill('#webhook-url', `${app.webhooks.url}/panel`);
  await page.uncheck('#webhook-events input[value="file.completed"]');
  await page.click('#create-webhook');
  await page.locator('#webhooks-error', { hasText: 'Choose at least one event' }).waitFor();

  await page.check('#webhook-events input[value="file.completed"]');
  await page.check('#webhook-events input[value="order.paid"]');
  await page.click('#create-webhook');
  await page.waitForSelector('#new-webhook-secret:not([hidden])');
  const secret = (await page.textContent('#new-webhook-secret-value'))!;
  expect(secret).toMatch(/^whsec_/);
  const row = page.locator('#webhooks li', { hasText: `${app.webhooks.url}/panel` });
  await row.waitFor();
  expect(await row.textContent()).toContain('file.completed, order.paid');
  expect(await page.textContent('#webhooks')).not.toContain(secret);

  // A URL the service refuses: its message beside the form.
  await page.fill('#webhook-url', 'http://169.254.169.254/latest');
  await page.click('#create-webhook');
  await page.locator('#webhooks-error', { hasText: /\S/ }).waitFor();
  expect(await page.locator('#webhooks li').count()).toBe(1);

  await row.getByRole('button', { name: 'Ping' }).click();
  await page.locator('#webhook-deliveries li', { hasText: 'ping' }).waitFor();
  const hook = await until('the ping at the receiver', () => app.webhooks.received.find((h) => h.path === '/panel'));
  expect(new Webhook(secret).verify(hook!.body, hook!.headers)).toMatchObject({ type: 'ping' });
  // The log says delivered once the delivery function recorded the receiver's 200.
  await until(
    'the ping logged delivered',
    async () => {
      await page.click('#refresh-deliveries');
      return page.textContent('#webhook-deliveries');
    },
    (text) => /ping · delivered · 1 attempt · HTTP 200/.test(text ?? ''),
  );

  await row.getByRole('button', { name: 'Delete' }).click();
  await row.waitFor({ state: 'detached' });
  expect(await page.isHidden('#webhook-log')).toBe(true);
  const token = await page.evaluate(() => sessionStorage.getItem('serviceToken'));
  expect((await app.request('GET', '/me/webhooks', { token: token! })).body.data).toEqual([]);
});
