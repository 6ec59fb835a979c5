import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { httpRouteList } from '#infra/routes.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';

// The playground and the API reference in a real browser (Debian's chromium, driven by
// playwright-core): sign-in through the local identity provider, a streamed reply, a presigned
// upload from the browser (the local S3's CORS), an ingestion with its progress, and a cited
// answer. PLAYGROUND_SCREENSHOT=<file.png> saves the page after the cited answer.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

let app: TestApp;
let browser: Browser;
let page: Page;
let origin: string;
let dir: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `No browser at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium; .ci/run does) or set CHROMIUM_PATH`,
    );
  }
  dir = await mkdtemp(join(tmpdir(), 'playground-'));
  await writeFile(join(dir, 'animals.pdf'), await makeTextPdf(3, 6));
  app = await startTestApp();
  origin = new URL(app.url).origin;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('the playground: sign in, a streamed reply, a PDF uploaded and ingested, a cited answer', async () => {
  const failed: string[] = [];
  page.on('requestfailed', (r) => failed.push(`${r.method()} ${r.url()}: ${r.failure()?.errorText}`));
  await page.goto(`${origin}/`);
  await page.fill('#email', 'browser@example.com');
  await page.fill('#name', 'Browser User');
  await page.click('#sign-in-button');
  await page.waitForSelector('#app:not([hidden])');
  expect(await page.textContent('#who')).toContain('browser@example.com');

  // A text chat and a streamed reply (the stream's first event names the reply's message id).
  await page.fill('#chat-name', 'Hello chat');
  await page.click('#create-chat');
  await page.waitForSelector('#chat-title:has-text("Hello chat")');
  await page.fill('#prompt', 'Hello from the browser');
  await page.click('#send');
  const reply = await page.waitForSelector('#messages li.ai.done');
  const chatId = await page.getAttribute('#chats li.current', 'data-chat-id');
  const stored = await app.request('GET', `/chat/${chatId}/messages`, { token: await serviceToken() });
  const ai = stored.body.data.find((m: any) => m.messageType === 'ai');
  expect(await reply.getAttribute('data-message-id')).toBe(ai.id);
  expect((await reply.textContent())?.trim()).toBe(ai.message.trim());
  expect(ai.message.length).toBeGreaterThan(0);

  // A file chat: the PDF goes from the browser to the presigned URL, then is ingested.
  await page.fill('#chat-name', 'Animals');
  await page.selectOption('#chat-type', 'file');
  await page.click('#create-chat');
  await page.waitForSelector('#upload-form:not([hidden])');
  await page.setInputFiles('#pdf', join(dir, 'animals.pdf'));
  await page.click('#upload-button');
  await page.waitForSelector('#ingest-status[data-status]', { timeout: 60_000 });
  expect(await page.getAttribute('#ingest-status', 'data-status')).toBe('completed');
  expect(await page.textContent('#ingest-status')).toMatch(/completed, stage done, pages 3 of 3, parts (\d+) of \1/);
  expect(await page.$eval('#upload-progress', (e) => (e as unknown as { value: number }).value)).toBe(1);
  // The file list is redrawn after the status line (the chat is read again): wait for that redraw.
  await page.waitForSelector('#files .file-status:has-text("animals.pdf")');
  expect(failed).toEqual([]);

  // A question about it: the answer streams in and cites file, page and quote.
  const sentence = knownSentence(2, 1);
  await page.fill('#prompt', sentence);
  await page.click('#send');
  await page.waitForSelector('#messages li.ai.done .citation');
  const first = await page.textContent('#messages li.ai.done:last-child .citation');
  expect(first).toContain('animals.pdf, page 2');
  expect(first).toMatch(/“.+”/);
  if (process.env.PLAYGROUND_SCREENSHOT)
    await page.screenshot({ path: process.env.PLAYGROUND_SCREENSHOT, fullPage: true });
}, 180_000);

test('the API reference at /docs renders every route of the manifest', async () => {
  await page.goto(`${origin}/docs`);
  await page.waitForSelector('.opblock', { timeout: 30_000 });
  const operations = await page.$$eval('.opblock', (blocks) =>
    blocks.map(
      (b) =>
        `${b.querySelector('.opblock-summary-method')?.textContent} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
    ),
  );
  expect(operations.sort()).toEqual(httpRouteList.map((r) => `${r.method} ${r.path}`).sort());
}, 60_000);

async function serviceToken(): Promise<string> {
  return page.evaluate(() => (globalThis as any).sessionStorage.getItem('serviceToken') as string);
}
