import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { type Playground, signInOnPage, startPlayground } from '#test/helpers/browser.ts';
import { httpRouteList } from '#infra/routes.ts';
import type { TestApp } from '#test/helpers/app.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { makeScannedPdf, SCANNED_PAGES } from '#test/helpers/make-script-pdfs.ts';
import { until } from '#test/helpers/until.ts';

// The playground and the API reference in a real browser (Debian's chromium, driven by
// playwright-core): sign-in through the local identity provider, a streamed reply, a presigned
// upload from the browser (the local S3's CORS), ingestions shown live (OCR included), and a cited
// answer. A screenshot is taken of each main state (PLAYGROUND_SCREENSHOTS=<dir> keeps them).

let app: TestApp;
let playground: Playground;
let page: Page;
let origin: string;
let dir: string;
let shots: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'playground-'));
  shots = process.env.PLAYGROUND_SCREENSHOTS ?? join(dir, 'screenshots');
  await mkdir(shots, { recursive: true });
  await writeFile(join(dir, 'animals.pdf'), await makeTextPdf(3, 6));
  await writeFile(join(dir, 'scanned.pdf'), await makeScannedPdf(SCANNED_PAGES.slice(0, 3)));
  await writeFile(join(dir, 'photo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]));
  await writeFile(join(dir, 'renamed.pdf'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]));
  // No wait inside POST /message/pdf: the page shows the ingestion while it runs.
  // Offline replies stream word by word at a pace a Stop and a reload can catch mid-way.
  ({ app, page } = playground = await startPlayground({
    env: { PDF_SYNC_WAIT_MS: '0', OCR_WORKERS: '1', OCR_PAGES_PER_MESSAGE: '1', OFFLINE_STREAM_DELAY_MS: '40' },
  }));
  origin = new URL(app.url).origin;
}, 120_000);
afterAll(async () => {
  await playground?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A screenshot of one of the playground's states (PLAYGROUND_SCREENSHOTS=<dir> keeps them). */
async function screenshot(name: string) {
  const path = join(shots, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  expect((await readFile(path)).subarray(1, 4).toString()).toBe('PNG');
}

/** Every state a file row of the page shows, recorded as the page draws it (with the prompt's state then). */
async function recordFileRows() {
  await page.evaluate(() => {
    const w = globalThis as any;
    w.fileRows = [];
    const record = () => {
      for (const row of w.document.querySelectorAll('#files .file-status'))
        w.fileRows.push({
          name: row.querySelector('.name')?.textContent,
          status: row.dataset.status,
          detail: row.querySelector('.detail')?.textContent,
          promptDisabled: w.document.getElementById('prompt').disabled,
        });
    };
    new w.MutationObserver(record).observe(w.document.getElementById('files'), { childList: true, subtree: true });
  });
}
const fileRows = () =>
  page.evaluate(
    () => (globalThis as any).fileRows as { name: string; status: string; detail: string; promptDisabled: boolean }[],
  );

test('the playground: signed out, signed in, a text chat, a file chat read live, a cited answer, signed out again', async () => {
  const failed: string[] = [];
  page.on('requestfailed', (r) => failed.push(`${r.method()} ${r.url()}: ${r.failure()?.errorText}`));
  await page.goto(`${origin}/`);

  // Signed out: only the sign-in form (the app's forms stay hidden), every control labelled.
  expect(await page.isVisible('#sign-in-form')).toBe(true);
  for (const hidden of ['#app', '#new-chat', '#chat', '#account'])
    expect([hidden, await page.isVisible(hidden)]).toEqual([hidden, false]);
  const unlabelled = await page.$$eval('input, textarea, select', (els) =>
    els.filter((e) => !(e as any).labels?.length && !e.getAttribute('aria-label')).map((e) => e.id),
  );
  expect(unlabelled).toEqual([]);
  await screenshot('1-signed-out');

  // A bad email: the error beside the form, the field marked, nothing sent.
  await page.fill('#email', 'not-an-email');
  await page.click('#sign-in-button');
  expect(await page.textContent('#sign-in-error')).toContain('Enter an email address');
  expect(await page.getAttribute('#email', 'aria-invalid')).toBe('true');

  // Signed in, by keyboard: what to do next, no chats yet, who and how to sign out.
  await page.fill('#email', 'browser@example.com');
  await page.fill('#name', 'Browser User');
  await page.press('#name', 'Enter');
  await page.waitForSelector('#app:not([hidden])');
  expect(await page.textContent('#who')).toContain('browser@example.com');
  expect(await page.isVisible('#sign-out')).toBe(true);
  expect(await page.textContent('#welcome')).toContain('Create a text chat');
  expect(await page.isVisible('#no-chats')).toBe(true);
  await screenshot('2-signed-in');

  // A text chat; Shift+Enter is a new line, Enter sends; the reply streams (its first event names its id).
  await page.fill('#chat-name', 'Hello chat');
  await page.click('#create-chat');
  await page.waitForSelector('#chat-title:has-text("Hello chat")');
  expect(await page.isVisible('#file-panel')).toBe(false);
  await page.click('#prompt');
  await page.keyboard.type('Hello');
  await page.keyboard.press('Shift+Enter');
  await page.keyboard.type('from the browser');
  expect(await page.inputValue('#prompt')).toBe('Hello\nfrom the browser');
  expect(await page.$$('#messages li')).toHaveLength(0);
  await page.keyboard.press('Enter');
  const reply = await page.waitForSelector('#messages li.ai.done');
  expect(await page.inputValue('#prompt')).toBe('');
  const chatId = await page.getAttribute('#chats button[aria-current="true"]', 'data-chat-id');
  const stored = await app.request('GET', `/chat/${chatId}/messages`, { token: await serviceToken() });
  const ai = stored.body.data.find((m: any) => m.messageType === 'ai');
  expect(stored.body.data[0].message).toBe('Hello\nfrom the browser');
  expect(await reply.getAttribute('data-message-id')).toBe(ai.id);
  expect((await reply.$eval('.text', (e) => e.textContent))?.trim()).toBe(ai.message.trim());
  await screenshot('3-text-chat');

  // A long reply (the offline provider quotes the earlier message closest to the prompt): Stop
  // ends it where it is, on the server too; the next one, cut by a reload, is followed to its end.
  const notes = Array.from({ length: 90 }, (_, i) => `note${i}`).join(' ');
  await sendPrompt(notes);
  await page.waitForSelector('#messages li.ai.done >> nth=1');
  await sendPrompt('Recall note1 and note2 please');
  await page.waitForFunction(() => {
    const li = (globalThis as any).document.querySelectorAll('#messages li.ai')[2];
    return li && !li.classList.contains('done') && li.querySelector('.text').textContent.length > 0;
  });
  expect(await page.isVisible('#stop')).toBe(true);
  await page.click('#stop');
  const stoppedReply = await page.waitForSelector('#messages li.ai.done.stopped');
  expect(await page.isVisible('#stop')).toBe(false);
  const afterStop = await app.request('GET', `/chat/${chatId}/messages`, { token: await serviceToken() });
  const stoppedId = await stoppedReply.getAttribute('data-message-id');
  const stoppedAi = afterStop.body.data.find((m: any) => m.id === stoppedId);
  expect(stoppedAi).toMatchObject({ status: 'stopped', incomplete: true });
  expect((await stoppedReply.$eval('.text', (e) => e.textContent))?.trim()).toBe(stoppedAi.message.trim());
  await screenshot('3b-reply-stopped');

  await sendPrompt('note3 note4 note5 once more');
  await page.waitForFunction(() => {
    const li = (globalThis as any).document.querySelectorAll('#messages li.ai')[3];
    return li && !li.classList.contains('done') && li.querySelector('.text').textContent.length > 0;
  });
  expect(failed).toEqual([]);
  await page.reload();
  // The reload cut the reply's stream on purpose: its request is the one that failed.
  expect(failed.splice(0)).toEqual([expect.stringMatching(/^POST .*\/message\/logged-in: net::ERR_ABORTED$/)]);
  await page.click(`#chats button[data-chat-id="${chatId}"]`);
  await page.waitForFunction(() =>
    (globalThis as any).document.querySelectorAll('#messages li.ai')[3]?.classList.contains('done'),
  );
  const resumed = (await page.$$('#messages li.ai'))[3]!;
  const whole = await until(
    'the reply stored whole',
    async () => (await app.request('GET', `/chat/${chatId}/messages`, { token: await serviceToken() })).body.data,
    (messages: any[]) => messages.at(-1)?.status === 'complete',
  );
  expect((await resumed.$eval('.text', (e) => e.textContent))?.trim()).toBe(whole.at(-1).message.trim());
  expect(whole.at(-1).message).toContain('note3');

  // A file chat: nothing to ask about yet, so the prompt waits, saying why.
  await page.fill('#chat-name', 'Animals');
  await page.check('input[name="chat-type"][value="file"]');
  await page.click('#create-chat');
  await page.waitForSelector('#file-panel:not([hidden])');
  expect(await page.isDisabled('#prompt')).toBe(true);
  expect(await page.textContent('#prompt-state')).toContain('Add a document first');
  expect(await page.textContent('#files')).toContain('No document yet');
  await screenshot('4-file-chat-empty');

  // Not a document: refused beside the upload control; an image under a .pdf name fails in its row, not for ever.
  await page.setInputFiles('#pdf', join(dir, 'photo.png'));
  await page.click('#upload-button');
  expect(await page.textContent('#upload-error')).toContain('photo.png is not a document this service reads');
  await page.setInputFiles('#pdf', join(dir, 'renamed.pdf'));
  await page.click('#upload-button');
  const refused = await page.waitForSelector('#files .file-status[data-status="failed"]', { timeout: 60_000 });
  expect(await refused.textContent()).toMatch(/renamed\.pdf.*failed.*PDF/s);
  expect(await page.textContent('#prompt-state')).toContain('No file could be read');
  await screenshot('5-not-a-pdf');

  // Two PDFs, one of them scanned: each row shows its stage, pages, OCR pages and time as it is read,
  // one status line per file and no internal id; the prompt waits until both are read.
  await recordFileRows();
  await page.setInputFiles('#pdf', join(dir, 'scanned.pdf'));
  await page.click('#upload-button');
  await page.waitForSelector('#files .file-status[data-status="processing"]');
  await screenshot('6-reading');
  await page.setInputFiles('#pdf', join(dir, 'animals.pdf'));
  await page.click('#upload-button');
  await page.waitForSelector('#files .file-status[data-status="completed"]:has-text("animals.pdf")', {
    timeout: 120_000,
  });
  await page.waitForSelector('#files .file-status[data-status="completed"]:has-text("scanned.pdf")', {
    timeout: 180_000,
  });
  expect(await page.$eval('#upload-progress', (e) => (e as unknown as { value: number }).value)).toBe(1);
  const rows = await fileRows();
  const reading = rows.filter((r) => r.status === 'processing');
  expect(reading.length).toBeGreaterThan(0);
  expect(reading.every((r) => r.promptDisabled)).toBe(true);
  expect(reading.every((r) => / s$/.test(r.detail))).toBe(true);
  const ocr = reading.filter((r) => r.name === 'scanned.pdf' && r.detail.includes('OCR pages'));
  expect(ocr.map((r) => r.detail)).toContainEqual(
    expect.stringMatching(/recognising scanned pages · pages 3 of 3 · OCR pages [0-3] of 3 · /),
  );
  expect(await page.textContent('#files')).toMatch(/scanned\.pdfcompleted3 pages read, 3 by OCR/);
  expect(await page.$$('#files .file-status')).toHaveLength(3);
  const fileIds = (
    await app.request('GET', `/chat/${await currentChatId()}`, { token: await serviceToken() })
  ).body.data.files.map((f: any) => f.fileId);
  for (const id of fileIds) expect(await page.textContent('#chat')).not.toContain(id);
  expect(await page.isDisabled('#prompt')).toBe(false);
  expect(failed).toEqual([]);

  // A question about it: the answer streams in; its [n] markers link to the cited sources, each a
  // link opening the PDF at its page; sources retrieved but not cited are set apart.
  const sentence = knownSentence(2, 1);
  await page.fill('#prompt', sentence);
  await page.press('#prompt', 'Enter');
  const answer = await page.waitForSelector('#messages li.ai.done:last-child .citation');
  expect(answer).toBeTruthy();
  const last = '#messages li.ai.done:last-child';
  const cited = await page.$$eval(`${last} .sources > ol .citation`, (items) =>
    items.map((i) => ({
      text: i.textContent,
      href: i.querySelector('a')?.getAttribute('href'),
      cited: (i as any).dataset.cited,
    })),
  );
  expect(cited[0]).toMatchObject({
    text: expect.stringMatching(/animals\.pdf, page 2.*“.+”/s),
    href: expect.stringMatching(/#page=2$/),
  });
  expect(await page.textContent(`${last} .sources h3`)).toBe('Cited');
  const notCited = await page.$$eval(`${last} .sources details .citation`, (items) => items.length);
  if (notCited > 0) expect(await page.textContent(`${last} .sources details summary`)).toContain('not cited');
  const marker = await page.$(`${last} .text a.marker`);
  expect(marker).not.toBeNull();
  await marker!.click();
  const target = await page.evaluate(() => (globalThis as any).location.hash.slice(1));
  expect(await page.$eval(`[id="${target}"]`, (e) => e.closest('.sources') !== null)).toBe(true);
  // The link is the PDF the browser uploaded: the local S3 serves it.
  const pdf = await fetch(cited[0]!.href!.replace(/#.*$/, ''));
  expect(pdf.headers.get('content-type')).toBe('application/pdf');
  await screenshot('7-cited-answer');

  // Signed out: back to the sign-in form, the token gone.
  await page.click('#sign-out');
  await page.waitForSelector('#sign-in:not([hidden])');
  expect(await page.isVisible('#app')).toBe(false);
  expect(await serviceToken()).toBeNull();
  await screenshot('8-signed-out-again');
}, 420_000);

test('conversations in the playground: a title, regenerate, versions ‹ › , edit, thumbs, search, export and a share link', async () => {
  await signInOnPage(page, app, 'branches-browser@example.com');
  const token = await serviceToken();
  const messagesOf = async (chatId: string) =>
    (await app.request('GET', `/chat/${chatId}/messages`, { token })).body.data as any[];

  // A chat without a name is titled from its first exchange (the offline title: the prompt's first words).
  await page.click('#create-chat');
  await page.waitForSelector('#chat:not([hidden])');
  await sendPrompt('Migrating geese fly south in winter');
  await page.waitForSelector('#chat-title:has-text("Migrating geese fly south in winter")');
  await page.waitForSelector('#chats button[aria-current="true"]:has-text("Migrating geese")');
  const chatId = (await currentChatId())!;
  await page.waitForSelector('#messages li.ai.done .tools .regenerate');

  // Regenerate: a second version of the reply, ‹ 2/2 ›; ‹ shows the first again.
  const [first] = (await messagesOf(chatId)).filter((m) => m.messageType === 'ai');
  await page.click('#messages li.ai .regenerate');
  await page.waitForSelector('#messages li.ai .versions .count:has-text("2/2")');
  const second = (await messagesOf(chatId)).at(-1);
  expect(second.siblingIds).toEqual([first.id, second.id]);
  await page.click('#messages li.ai .versions .prev');
  await page.waitForSelector(`#messages li.ai[data-message-id="${first.id}"] .versions .count:has-text("1/2")`);
  await screenshot('10-versions');

  // Edit the prompt: a branch beside the first, its own ‹ 2/2 ›.
  await page.click('#messages li.user .edit');
  await page.fill('#messages li.user .edit-text', 'Migrating swans fly south too');
  await page.click('#messages li.user .edit-form button[type="submit"]');
  await page.waitForSelector('#messages li.user .versions .count:has-text("2/2")');
  await page.waitForSelector('#messages li.ai.done .tools');
  const edited = await messagesOf(chatId);
  expect(edited[0].message).toBe('Migrating swans fly south too');
  expect(await page.$eval('#messages li.user .text', (e) => e.textContent)).toBe('Migrating swans fly south too');

  // Thumbs drawn as the page's SVG icons, not emoji (an empty box where no emoji font is
  // installed): drawn at their size, labelled, and pressed is seen (the thumb filled), not only said.
  const thumbs = () =>
    page.$$eval(`#messages li.ai[data-message-id="${edited[1].id}"] .rate`, (buttons) =>
      buttons.map((b: any) => {
        const w = globalThis as any;
        const svg = b.querySelector('svg');
        const box = svg?.getBoundingClientRect();
        return {
          label: b.getAttribute('aria-label'),
          title: b.getAttribute('title'),
          pressed: b.getAttribute('aria-pressed'),
          text: b.textContent,
          before: w.getComputedStyle(b, '::before').content,
          icon: svg && { width: box.width, height: box.height, hidden: svg.getAttribute('aria-hidden') },
          fill: svg && w.getComputedStyle(svg).fill,
        };
      }),
    );
  const icon = { width: 16, height: 16, hidden: 'true' };
  const thumb = (label: string, pressed: boolean) => ({
    label,
    title: label,
    pressed: String(pressed),
    text: '',
    before: 'none',
    icon,
    fill: pressed ? 'rgb(11, 92, 173)' : 'none',
  });
  expect(await thumbs()).toEqual([thumb('Good reply', false), thumb('Bad reply', false)]);

  // Thumbs up, stored on the message; pressed again, taken back.
  const rated = `#messages li.ai[data-message-id="${edited[1].id}"] .rate.up`;
  await page.click(rated);
  await page.waitForSelector(`${rated}[aria-pressed="true"]`);
  expect((await messagesOf(chatId))[1].feedback).toMatchObject({ rating: 'up' });
  expect(await thumbs()).toEqual([thumb('Good reply', true), thumb('Bad reply', false)]);
  await screenshot('10b-rated');
  await page.click(rated);
  await page.waitForSelector(`${rated}[aria-pressed="false"]`);
  expect((await messagesOf(chatId))[1].feedback).toBeUndefined();
  expect(await thumbs()).toEqual([thumb('Good reply', false), thumb('Bad reply', false)]);

  // Search finds the chat by a word of its other branch.
  await page.fill('#search', 'geese');
  await page.press('#search', 'Enter');
  await page.waitForSelector(`#search-results button[data-chat-id="${chatId}"]`);
  expect(await page.textContent('#search-results')).toContain('geese');
  await screenshot('11-search');

  // Export: the chat as a Markdown file, named for it.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-markdown')]);
  expect(download.suggestedFilename()).toMatch(/\.md$/);
  expect(await readFile((await download.path())!, 'utf8')).toContain('Migrating swans fly south too');

  // Share: a link anyone can read without signing in; stopped, it is gone.
  await page.click('#share');
  await page.waitForSelector('#share-panel:not([hidden])');
  const url = await page.inputValue('#share-url');
  const shared = await fetch(url);
  expect(shared.status).toBe(200);
  expect(await shared.text()).toContain('Migrating swans fly south too');
  await screenshot('12-shared');
  await page.click('#unshare');
  await page.waitForSelector('#share-panel[hidden]', { state: 'attached' });
  expect((await fetch(url)).status).toBe(404);
}, 180_000);

test('the API reference at /docs renders every route of the manifest, with real examples and how to get a token', async () => {
  await page.goto(`${origin}/docs`);
  await page.waitForSelector('.opblock');
  const operations = await page.$$eval('.opblock', (blocks) =>
    blocks.map(
      (b) =>
        `${b.querySelector('.opblock-summary-method')?.textContent} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
    ),
  );
  expect(operations.sort()).toEqual(httpRouteList.map((r) => `${r.method} ${r.path}`).sort());

  // How to get a token for Authorize, above the reference.
  const note = await page.textContent('#get-a-token');
  expect(note).toContain('npm run -s token -- --email you@example.com');
  expect(note).toContain('Copy token');

  // Real examples, not "string": the request and the answer of POST /message/pdf.
  const ingest = page.locator('.opblock-post:has(.opblock-summary-path[data-path="/message/pdf"])');
  await ingest.locator('.opblock-summary').click();
  await ingest.locator('.opblock-body .microlight').first().waitFor();
  const shown = await ingest.locator('.opblock-body').textContent();
  expect(shown).toContain('X-Amz-Algorithm=AWS4-HMAC-SHA256');
  expect(shown).toContain('"fileId": "f5h8j2k6m3n9p4q7r1s0t8uv"');
  expect(shown).toContain('"status": "completed"');
  expect(shown).not.toContain('"url": "string"');
  await screenshot('9-api-reference');
}, 60_000);

/** Types a prompt and sends it (Enter), as a user does. */
async function sendPrompt(prompt: string) {
  await page.fill('#prompt', prompt);
  await page.press('#prompt', 'Enter');
}

async function serviceToken(): Promise<string> {
  return page.evaluate(() => (globalThis as any).sessionStorage.getItem('serviceToken') as string);
}

function currentChatId(): Promise<string | null> {
  return page.getAttribute('#chats button[aria-current="true"]', 'data-chat-id');
}
