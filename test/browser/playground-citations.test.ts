import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { TestApp } from '#test/helpers/app.ts';
import { type Playground, signInOnPage, startPlayground } from '#test/helpers/browser.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { makeScannedPdf, SCANNED_PAGES } from '#test/helpers/make-script-pdfs.ts';

// A cited answer in the playground, in a real browser (Debian's chromium, driven by
// playwright-core): the sources the reply cites are marked, a quote retrieved twice (from two
// overlapping chunks) is shown once, and a citation clicked shows its page (the PNG of
// GET /message/pdf/{fileId}/pages/{page}) with a highlight over the quote's boxes, on a text PDF
// and on a scan (PLAYGROUND_SCREENSHOTS=<dir> keeps a screenshot of each).

let app: TestApp;
let playground: Playground;
let page: Page;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'playground-citations-'));
  await writeFile(join(dir, 'animals.pdf'), await makeTextPdf(3, 6));
  await writeFile(join(dir, 'scan.pdf'), await makeScannedPdf(SCANNED_PAGES.slice(0, 3)));
  // Small chunks overlapping by more than a sentence: every sentence is in two chunks, so a
  // question naming one retrieves both and each quotes the same sentence.
  ({ app, page } = playground = await startPlayground({ env: { CHUNK_TOKENS: '120', CHUNK_OVERLAP_TOKENS: '60' } }));
}, 120_000);
afterAll(async () => {
  await playground?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

const keyOf = (s: { fileId: string; page: number; quote: string }) =>
  JSON.stringify([s.fileId, s.page, s.quote.replace(/\s+/g, ' ').trim().toLowerCase()]);

test('a citation clicked shows its page with the quote highlighted; cited sources are marked, duplicate quotes shown once', async () => {
  await signInOnPage(page, app, 'citations@example.com');
  const sources = await askAbout('animals.pdf', knownSentence(2, 1));

  // The reply as stored: its sources hold the same quote twice (the setup's point).
  const keys = [...new Set(sources.map(keyOf))];
  expect(keys.length).toBeLessThan(sources.length);

  // Each quote once, marked cited when any of its copies is cited.
  const shown = await page.$$eval(`${last} .citation`, (items) =>
    items.map((i) => ({
      text: i.querySelector('.quote')?.textContent,
      cited: (i as any).dataset.cited,
      badge: i.querySelector('.badge') !== null,
    })),
  );
  expect(shown).toHaveLength(keys.length);
  expect(new Set(shown.map((s) => s.text)).size).toBe(shown.length);
  for (const item of shown) {
    const copies = sources.filter((s) => `“${s.quote}”` === item.text);
    const cited = copies.some((s) => s.cited === true);
    expect(item).toEqual({ text: item.text, cited: String(cited), badge: cited });
  }
  expect(shown.some((s) => s.cited === 'true')).toBe(true);

  // A marker clicked: its page, the image loaded, a highlight over each of the quote's boxes.
  const marker = page.locator(`${last} .text a.marker`).first();
  const n = Number((await marker.textContent())!.replace(/\D/g, ''));
  const source = sources[n - 1];
  expect(source.boxes.length).toBeGreaterThan(0);
  await marker.click();
  await page.waitForSelector('#page-view[data-state="shown"]');
  expect(await page.textContent('#page-view-title')).toBe(`animals.pdf, page ${source.page}`);
  const natural = await page.$eval('#page-frame img', (img) => {
    const i = img as unknown as { naturalWidth: number; naturalHeight: number };
    return i.naturalWidth / i.naturalHeight;
  });
  expect(natural).toBeCloseTo(612 / 792, 2);
  await expectHighlightsOver(source.boxes);
  expect(await page.textContent('#page-view-passage mark')).toBe(source.quote);
  await page.screenshot({ path: join(process.env.PLAYGROUND_SCREENSHOTS ?? dir, 'citation-page.png') });

  // A source clicked (its quote) shows its page the same way; Close hides the page.
  await page.click(`${last} .citation .quote >> nth=0`);
  await page.waitForSelector('#page-view[data-state="shown"]');
  expect(await page.$$('#page-frame .highlight')).not.toHaveLength(0);
  await page.click('#page-view-close');
  await page.waitForSelector('#page-view[hidden]', { state: 'attached' });
}, 240_000);

test("a scanned page's citation: the highlight lies over the passage OCR recognised", async () => {
  const sources = await askAbout('scan.pdf', 'Who is the lighthouse keeper?');
  const marker = page.locator(`${last} .text a.marker`).first();
  const source = sources[Number((await marker.textContent())!.replace(/\D/g, '')) - 1];
  expect(source).toMatchObject({
    ocr: true,
    page: 3,
    verified: true,
    quote: expect.stringContaining('Margaret Hollis'),
  });
  await marker.click();
  await page.waitForSelector('#page-view[data-state="shown"]');
  expect(await page.textContent('#page-view-title')).toBe('scan.pdf, page 3');
  await expectHighlightsOver(source.boxes);
  await page.screenshot({ path: join(process.env.PLAYGROUND_SCREENSHOTS ?? dir, 'citation-scanned-page.png') });
}, 300_000);

const last = '#messages li.ai.done:last-child';

/** A new file chat holding `fileName` (uploaded from the browser and read), a question, its reply's sources as stored. */
async function askAbout(fileName: string, question: string): Promise<any[]> {
  await page.fill('#chat-name', fileName);
  await page.check('input[name="chat-type"][value="file"]');
  await page.click('#create-chat');
  await page.waitForSelector(`#chat-title:has-text("${fileName}")`);
  await page.setInputFiles('#pdf', join(dir, fileName));
  await page.click('#upload-button');
  await page.waitForSelector('#files .file-status[data-status="completed"]', { timeout: 200_000 });
  await page.fill('#prompt', question);
  await page.press('#prompt', 'Enter');
  await page.waitForSelector(`${last} .citation`);
  const token = await page.evaluate(() => (globalThis as any).sessionStorage.getItem('serviceToken') as string);
  const chatId = await page.getAttribute('#chats button[aria-current="true"]', 'data-chat-id');
  return (await app.request('GET', `/chat/${chatId}/messages`, { token })).body.data.at(-1).sources;
}

/** Every highlight lies over the page image, where its box (fractions of the page) puts it. */
async function expectHighlightsOver(boxes: Box[]) {
  const image = (await (await page.$('#page-frame img'))!.boundingBox())!;
  const highlights = await page.$$('#page-frame .highlight');
  expect(highlights).toHaveLength(boxes.length);
  for (const [i, highlight] of highlights.entries()) {
    const rect = (await highlight.boundingBox())!;
    const box = boxes[i]!;
    expect(rect.width).toBeGreaterThan(0);
    expect(rect.height).toBeGreaterThan(0);
    expect(rect.x).toBeGreaterThanOrEqual(image.x - 1);
    expect(rect.y).toBeGreaterThanOrEqual(image.y - 1);
    expect(rect.x + rect.width).toBeLessThanOrEqual(image.x + image.width + 1);
    expect(rect.y + rect.height).toBeLessThanOrEqual(image.y + image.height + 1);
    expect(Math.abs(rect.x - (image.x + box.x * image.width))).toBeLessThan(2);
    expect(Math.abs(rect.y - (image.y + box.y * image.height))).toBeLessThan(2);
    expect(Math.abs(rect.width - box.width * image.width)).toBeLessThan(2);
  }
}
