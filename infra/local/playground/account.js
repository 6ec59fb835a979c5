// The account panel: the usage GET /me reports against what is allowed, kept current after each
// action that changes it (docs/DECISIONS.md "The playground's account panel"), the account's
// export and its erasure.

import { $, call, el, POLL_MS, pause } from './api.js';

const number = (n) => new Intl.NumberFormat('en').format(n);
const total = (byModel) => Object.values(byModel).reduce((sum, n) => sum + n, 0);
const bytes = (n) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${number(Math.ceil(n / 1024))} KB`);

let asked = 0; // the reads started: an answer older than the one shown is dropped
let shown = 0;

function render(u) {
  const { budget } = u;
  const rows = [
    [
      'Tokens today',
      budget.dailyTokens
        ? `${number(budget.usedToday)} of ${number(budget.dailyTokens)}`
        : number(total(u.tokens.today)),
    ],
    ['Tokens this month', number(total(u.tokens.thisMonth))],
    ['Credits', `${number(budget.creditsLeft)} left of ${number(budget.creditsGranted)}`],
    ['Pages read', `${number(u.pages.ingested)} (${number(u.pages.ocr)} by OCR)`],
    [
      'Storage',
      u.storage.quotaBytes ? `${bytes(u.storage.bytes)} of ${bytes(u.storage.quotaBytes)}` : bytes(u.storage.bytes),
    ],
    ['Files · chats', `${number(u.files)} · ${number(u.chats)}`],
  ];
  $('usage').replaceChildren(
    ...rows.flatMap(([name, value]) => [el('dt', { textContent: name }), el('dd', { textContent: value })]),
  );
}

/** GET /me's usage as a list of what was used against what is allowed; answers the usage shown. */
export async function showUsage() {
  const mine = ++asked;
  const { usage } = (await call('GET', '/me')).data;
  if (mine < shown) return usage;
  shown = mine;
  render(usage);
  return usage;
}

/**
 * The panel read again after an action that changed it. `until` is what the usage must show
 * once counted: a count made just after the change it follows (a file's pages are counted after
 * the file is completed) is read again, a second apart, a few times at most.
 */
export function refreshUsage(until = () => true) {
  return (async () => {
    for (let i = 0; i < 10; i++) {
      if (until(await showUsage())) return;
      await pause(POLL_MS);
    }
  })().catch((e) => {
    $('account-error').textContent = e.message;
  });
}

/** POST /me/export, then its status until the ZIP is ready (built in the background): a download link. */
export async function exportAccount() {
  $('export-account').disabled = true;
  try {
    $('export-state').textContent = 'Preparing your export…';
    const { exportId } = (await call('POST', '/me/export')).data;
    for (;;) {
      const { status, url } = (await call('GET', `/me/export/${exportId}`)).data;
      if (status === 'ready') {
        $('export-state').replaceChildren(
          'Your export is ready: ',
          el('a', { id: 'export-link', href: url, textContent: 'download the ZIP' }),
          ' (for a day).',
        );
        return;
      }
      if (status === 'failed') throw new Error('The export failed: try again.');
      await pause(POLL_MS);
    }
  } catch (e) {
    $('export-state').textContent = '';
    throw e;
  } finally {
    $('export-account').disabled = false;
  }
}

/** DELETE /me once confirmed; true when deleted (its token stops working at once: the caller signs out). */
export async function deleteAccount() {
  if (
    !confirm(
      'Delete your account and everything in it (chats, files, shares)? Orders are kept for accounting, without your name. This cannot be undone.',
    )
  )
    return false;
  await call('DELETE', '/me');
  return true;
}
