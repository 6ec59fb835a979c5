// The playground: plain JavaScript modules on the public API (the same calls any client makes),
// plus the local identity provider's sign-in endpoint; served as they are by `npm start` only.
// This entry signs in and out and wires each view's controls; the views are their own modules.

import { $, api, call, guard, onUnauthorized, session, showError } from './api.js';
import { deleteAccount, exportAccount, refreshUsage, showUsage } from './account.js';
import { exportChat, openChat, sendPrompt, share, unshare } from './chat.js';
import { listChats, search } from './chat-list.js';
import { stopPolling, uploadPdf } from './files.js';
import { createKey, forgetKey, listKeys } from './keys.js';
import { listOrders, placeOrder } from './orders.js';
import { closePage } from './page-view.js';
import { stopReply } from './stream.js';
import { webhooksPanel } from './webhooks.js';

const webhooks = webhooksPanel();

// --- sign-in and out -----------------------------------------------------------------------

async function signIn(email, name) {
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]{2,}$/.test(email)) {
    $('email').setAttribute('aria-invalid', 'true');
    $('email').focus();
    throw new Error('Enter an email address, such as you@example.com.');
  }
  $('email').removeAttribute('aria-invalid');
  const idp = await fetch('/local-idp/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, name }),
  });
  if (!idp.ok) throw new Error((await idp.json()).message);
  const { idToken } = await idp.json();
  const res = await fetch(`${api}/auth`, { method: 'POST', headers: { authorization: `Bearer ${idToken}` } });
  const json = await res.json();
  if (!res.ok) throw new Error(json.message);
  session.token = json.data.token;
  sessionStorage.setItem('serviceToken', session.token);
  sessionStorage.setItem('user', JSON.stringify(json.data.user));
  await showApp();
}

function signOut(message) {
  stopPolling();
  closePage();
  session.token = undefined;
  session.current = undefined;
  sessionStorage.removeItem('serviceToken');
  sessionStorage.removeItem('user');
  forgetKey();
  webhooks.reset();
  $('app').hidden = true;
  $('account').hidden = true;
  $('sign-in').hidden = false;
  showError('sign-in-error', message);
  $('email').focus();
}
onUnauthorized(signOut);

async function showApp() {
  const user = JSON.parse(sessionStorage.getItem('user') ?? '{}');
  $('who').textContent = `Signed in as ${user.email ?? '?'}`;
  $('sign-in').hidden = true;
  $('account').hidden = false;
  $('app').hidden = false;
  $('welcome').hidden = session.current !== undefined;
  // Busy until the lists are drawn: they move the page as they arrive (a click would land elsewhere).
  $('app').setAttribute('aria-busy', 'true');
  try {
    await Promise.all([listChats(), listOrders(), showUsage(), listKeys(), webhooks.list()]);
  } finally {
    $('app').setAttribute('aria-busy', 'false');
  }
}

// --- wiring --------------------------------------------------------------------------------

const failOn = (id) => (e) => showError(id, e.message);

$('sign-in-form').onsubmit = guard('sign-in-error', () => signIn($('email').value.trim(), $('name').value.trim()));
$('sign-out').onclick = () => signOut();
$('page-view-close').onclick = closePage;
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && !$('page-view').hidden) closePage();
});
$('copy-token').onclick = async () => {
  await navigator.clipboard?.writeText(session.token).catch(() => undefined);
  $('copy-token').textContent = 'Copied';
  setTimeout(() => ($('copy-token').textContent = 'Copy token'), 1500);
};

// A chat's button (the list, a search hit) names the chat it opens.
const opensChat = (errorId) => (event) => {
  const button = event.target.closest('button[data-chat-id]');
  if (button) openChat(button.dataset.chatId).catch(failOn(errorId));
};
$('chats').onclick = opensChat('new-chat-error');
$('search-results').onclick = opensChat('search-error');
$('new-chat').onsubmit = guard('new-chat-error', async () => {
  const type = document.querySelector('input[name="chat-type"]:checked').value;
  const { data } = await call('POST', '/chat', { type, ...($('chat-name').value && { name: $('chat-name').value }) });
  $('chat-name').value = '';
  void refreshUsage();
  await openChat(data.id);
  (type === 'file' ? $('pdf') : $('prompt')).focus();
});
$('search-form').onsubmit = guard('search-error', () => search($('search').value));

$('prompt-form').onsubmit = guard('prompt-error', async () => {
  const prompt = $('prompt').value;
  if (!prompt.trim() || $('prompt').disabled) return;
  $('prompt').value = '';
  try {
    await sendPrompt(prompt, $('stream').checked);
  } finally {
    $('prompt').focus();
  }
});
// Enter sends; Shift+Enter (or an input method composing) keeps the newline.
$('prompt').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $('prompt-form').requestSubmit();
  }
});
$('stop').onclick = stopReply;
$('upload-form').onsubmit = guard('upload-error', () => uploadPdf($('pdf').files[0]));
$('export-markdown').onclick = () => exportChat('markdown').catch(failOn('chat-error'));
$('export-json').onclick = () => exportChat('json').catch(failOn('chat-error'));
$('share').onclick = () => share().catch(failOn('chat-error'));
$('unshare').onclick = () => unshare().catch(failOn('chat-error'));

$('order-form').onsubmit = guard('orders-error', placeOrder);
$('key-form').onsubmit = guard('keys-error', () => createKey($('key-name').value));
$('webhook-form').onsubmit = guard('webhooks-error', () => webhooks.create());
$('refresh-usage').onclick = () => showUsage().catch(failOn('account-error'));
$('export-account').onclick = () => {
  showError('account-error', '');
  exportAccount().catch(failOn('account-error'));
};
$('delete-account').onclick = async () => {
  showError('account-error', '');
  try {
    if (await deleteAccount())
      signOut('Your account is deleted. Signing in again with the same email starts a new account.');
  } catch (e) {
    showError('account-error', e.message);
  }
};

// A stored token the service no longer accepts has already signed out (with why) in call().
if (session.token) showApp().catch(() => session.token && signOut());
