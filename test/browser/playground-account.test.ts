import type { Page } from 'playwright-core';
import { openPage, type Playground, signInOnPage, startPlayground } from '#test/helpers/browser.ts';
import type { TestApp } from '#test/helpers/app.ts';
import { makeTextPdf } from '#test/helpers/make-pdf.ts';

// The playground's account panel in a real browser (Debian's chromium, driven by playwright-core):
// the usage GET /me reports, shown against what is allowed and kept current, an export of the
// account's data (built by the data sweep, run here every second) offered as a download link, and
// the account deleted from the page (DELETE /me): the page signs out, saying so, and the token it
// held is refused at once. The panel follows what the page does without Refresh: a chat created,
// a document uploaded and read.

let app: TestApp;
let playground: Playground;
let page: Page;

beforeAll(async () => {
  ({ app, page } = playground = await startPlayground({
    env: {
      DAILY_TOKEN_BUDGET: '100000',
      USER_STORAGE_MAX_BYTES: String(10 * 1024 * 1024),
      SWEEP_INTERVAL_SECONDS: '1',
    },
  }));
}, 120_000);
afterAll(() => playground?.close());

/** The usage list as [term, value] pairs, as the page shows it. */
const usage = () =>
  page.$$eval('#usage dt', (terms) => terms.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent]));

test('the account panel shows the usage, kept current, exports the account and deletes it', async () => {
  await signInOnPage(page, app, 'account@example.com');
  await page.locator('#usage dt', { hasText: 'Tokens today' }).waitFor();
  expect(await usage()).toEqual([
    ['Tokens today', '0 of 100,000'],
    ['Tokens this month', '0'],
    ['Credits', '0 left of 0'],
    ['Pages read', '0 (0 by OCR)'],
    ['Storage', '0 KB of 10.0 MB'],
    ['Files · chats', '0 · 0'],
  ]);

  // A chat and a reply, then Refresh: the chat and the reply's tokens are counted.
  await page.fill('#chat-name', 'Counted');
  await page.click('#create-chat');
  await page.fill('#prompt', 'Hello');
  await page.press('#prompt', 'Enter');
  await page.locator('#messages li.ai').first().waitFor();
  await page.waitForSelector('#send:not([disabled])');
  await page.click('#refresh-usage');
  await page.locator('#usage dd', { hasText: '0 · 1' }).waitFor();
  const [today] = await usage();
  expect(today![1]).toMatch(/^[1-9][\d,]* of 100,000$/);

  // Export: the page waits for the sweep to build the ZIP, then links it.
  await page.click('#export-account');
  await page.locator('#export-state', { hasText: 'Preparing your export' }).waitFor();
  const link = await page.waitForSelector('#export-link', { timeout: 60_000 });
  const zip = Buffer.from(await (await fetch((await link.getAttribute('href'))!)).arrayBuffer());
  expect(zip.subarray(0, 4).toString('latin1')).toBe('PK\u0003\u0004');

  // Delete, confirmed in the browser's dialog: signed out, saying so; the old token is refused.
  const oldToken = await page.evaluate(() => sessionStorage.getItem('serviceToken'));
  page.once('dialog', (dialog) => dialog.accept());
  await page.click('#delete-account');
  await page.locator('#sign-in-error', { hasText: 'Your account is deleted' }).waitFor();
  expect(await page.isVisible('#app')).toBe(false);
  expect((await app.request('GET', '/me', { token: oldToken! })).status).toBe(401);
}, 120_000);

test('the account panel counts a chat, an upload and the pages read as they happen, without Refresh', async () => {
  const counts = await openPage(playground.browser);
  await counts.goto(`${new URL(app.url).origin}/`);
  await counts.fill('#email', 'counts@example.com');
  await counts.press('#email', 'Enter');
  const shows = (term: string, value: RegExp) =>
    counts
      .locator('#usage dt', { hasText: term })
      .locator('xpath=following-sibling::dd[1]', { hasText: value })
      .waitFor();
  await shows('Files · chats', /^0 · 0$/);
  await shows('Pages read', /^0 \(0 by OCR\)$/);

  // A file chat: counted once created.
  await counts.check('input[name="chat-type"][value="file"]');
  await counts.click('#create-chat');
  await counts.waitForSelector('#file-panel:not([hidden])');
  await shows('Files · chats', /^0 · 1$/);

  // A PDF of three pages, uploaded and read: the file, its bytes and its pages are counted.
  await counts.setInputFiles('#pdf', {
    name: 'animals.pdf',
    mimeType: 'application/pdf',
    buffer: Buffer.from(await makeTextPdf(3, 6)),
  });
  await counts.click('#upload-button');
  await counts.waitForSelector('#files .file-status[data-status="completed"]');
  await shows('Files · chats', /^1 · 1$/);
  await shows('Pages read', /^3 \(0 by OCR\)$/);
  await shows('Storage', /^[1-9][\d,]* KB of 10\.0 MB$/);
  await shows('Tokens today', /^[1-9][\d,]* of 100,000$/);
  await counts.close();
}, 120_000);
