import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestApp, type TestApp, type TestAppOptions } from './app.ts';

// The browser tests' Chromium: Debian's package (CHROMIUM_PATH for another), driven by
// playwright-core, headless and quiet (no updates, sync or background requests off loopback).

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

/** Launches Chromium; fails (never skips) when the machine has none. */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `No browser at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium; .ci/run does) or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
}

/**
 * A page of the playground's size whose waits (selectors, clicks, functions) give up after a
 * minute, not Playwright's 30 s: on a loaded machine an ingestion or a reply can take longer.
 */
export async function openPage(browser: Browser): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.setDefaultTimeout(60_000);
  return page;
}

export interface Playground {
  app: TestApp;
  browser: Browser;
  page: Page;
  /** Closes the browser, then stops the app and its stand-ins. */
  close(): Promise<void>;
}

/** A test app (with the stand-ins `options` name) and a Chromium page to drive its playground. */
export async function startPlayground(options: TestAppOptions = {}): Promise<Playground> {
  const app = await startTestApp(options);
  const browser = await launchChromium().catch(async (err: unknown) => {
    await app.stop();
    throw err;
  });
  const page = await openPage(browser);
  return {
    app,
    browser,
    page,
    async close() {
      await browser.close();
      await app.stop();
    },
  };
}

/** Opens the playground and signs in with `email` by keyboard; resolves once the app shows. */
export async function signInOnPage(page: Page, app: TestApp, email: string): Promise<void> {
  await page.goto(`${new URL(app.url).origin}/`);
  await page.fill('#email', email);
  await page.press('#email', 'Enter');
  // The app's lists load after it shows and move the page; a click before they land can miss.
  await page.waitForSelector('#app:not([hidden])[aria-busy="false"]');
}
