import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

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
