import type { Page } from 'playwright-core';
import OpenAI from 'openai';
import { type Playground, signInOnPage, startPlayground } from '#test/helpers/browser.ts';
import type { TestApp } from '#test/helpers/app.ts';

// The playground's API keys panel in a real browser: a key made from the page is shown once and
// works with the OpenAI client; the list shows it (never the key) and Revoke ends it at once.

let app: TestApp;
let playground: Playground;
let page: Page;

beforeAll(async () => {
  ({ app, page } = playground = await startPlayground());
}, 120_000);
afterAll(() => playground?.close());

test('a key made in the panel is shown once, works with the OpenAI client, is listed without the key and revoked', async () => {
  await signInOnPage(page, app, 'keys-panel@example.com');
  expect(await page.textContent('#openai-base')).toBe(`${app.url}/openai`);

  await page.fill('#key-name', 'notebook');
  await page.click('#create-key');
  await page.waitForSelector('#new-key:not([hidden])');
  const key = (await page.textContent('#new-key-value'))!;
  expect(key).toMatch(/^cops_/);
  await page.locator('#keys li', { hasText: 'notebook' }).waitFor();
  expect(await page.textContent('#keys')).not.toContain(key);

  const client = new OpenAI({ apiKey: key, baseURL: (await page.textContent('#openai-base'))!, maxRetries: 0 });
  expect((await client.models.list()).data.map((m) => m.id)).toEqual(['chat', 'library']);

  await page.locator('#keys li', { hasText: 'notebook' }).getByRole('button', { name: 'Revoke' }).click();
  await page.locator('#keys li', { hasText: 'notebook' }).waitFor({ state: 'detached' });
  await expect(client.models.list()).rejects.toMatchObject({ status: 401 });
});
