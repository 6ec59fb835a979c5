// The open chat: its messages (the active branch) with their controls (versions ‹ n/m ›, edit,
// regenerate, a rating), the prompts sent into it, and its export and share link.

import { $, answerError, call, el, guard, raw, session, showError } from './api.js';
import { refreshUsage } from './account.js';
import { listChats, showTitle } from './chat-list.js';
import { renderFiles, stopPolling, updatePromptState } from './files.js';
import { thumbDown, thumbUp } from './icons.js';
import { closePage } from './page-view.js';
import { replyItem } from './sources.js';
import { followStream, send } from './stream.js';

export async function openChat(chatId) {
  // Load first, then show: a prompt sent into a chat still loading would be wiped by its history.
  const [{ data: chat }, { data: messages }] = await Promise.all([
    call('GET', `/chat/${chatId}`),
    call('GET', `/chat/${chatId}/messages?limit=100`),
  ]);
  stopPolling(); // the chat left behind is not read again; this one starts its own if it needs it
  if (chatId !== session.current?.id) closePage();
  session.current = chat;
  for (const id of ['upload-error', 'prompt-error', 'chat-error']) showError(id, '');
  $('messages').replaceChildren(...messages.map(messageItem));
  // A reply still being generated (the page was reloaded, or another tab sent it) is followed
  // to its end: replayed from its first event, then live.
  const live = messages.find((m) => m.messageType === 'ai' && m.status === 'streaming');
  if (live) {
    const li = $('messages').querySelector(`li.ai[data-message-id="${live.id}"]`);
    li.querySelector('.text').textContent = '';
    void followStream(li, chatId, { lastId: 0 }).catch((e) => showError('prompt-error', e.message));
  }
  $('no-messages').hidden = messages.length > 0;
  showTitle(chat.chatName);
  showShare(undefined);
  $('file-panel').hidden = chat.type !== 'file';
  $('welcome').hidden = true;
  $('chat').hidden = false;
  renderFiles(chat.files ?? []);
  await listChats();
}

/** Reads the open chat again (its active branch, each message's versions). */
const reloadChat = () => openChat(session.current.id);

/** A stored message of the branch shown, with its controls (versions, edit or regenerate, rating). */
function messageItem(m) {
  const li =
    m.messageType === 'ai'
      ? replyItem(m.message, m.id, m.sources)
      : el(
          'li',
          { className: m.type === 'file' ? 'file' : 'user' },
          el('span', { className: 'text', textContent: m.message }),
        );
  li.dataset.messageId = m.id;
  if (m.messageType === 'ai' && m.status !== 'streaming') li.classList.add('done');
  if (m.status === 'stopped') li.classList.add('stopped');
  if (m.type === 'message') li.append(messageTools(m));
  return li;
}

/** ‹ 2/3 › between the versions of a message (edits of a prompt, regenerated replies). */
function versionNav(m) {
  const at = m.siblingIds.indexOf(m.id);
  const go = (i) => () =>
    call('PUT', `/chat/${session.current.id}`, { activeLeafId: m.siblingIds[i] })
      .then(reloadChat)
      .catch((e) => showError('prompt-error', e.message));
  return el(
    'span',
    { className: 'versions', role: 'group', ariaLabel: 'Versions' },
    el('button', {
      type: 'button',
      className: 'prev',
      ariaLabel: 'Previous version',
      disabled: at === 0,
      onclick: go(at - 1),
    }),
    el('span', { className: 'count', textContent: `${at + 1}/${m.siblingIds.length}` }),
    el('button', {
      type: 'button',
      className: 'next',
      ariaLabel: 'Next version',
      disabled: at === m.siblingIds.length - 1,
      onclick: go(at + 1),
    }),
  );
}

const RATINGS = {
  up: { label: 'Good reply', icon: thumbUp },
  down: { label: 'Bad reply', icon: thumbDown },
};

function messageTools(m) {
  const tools = el('div', { className: 'tools' });
  if ((m.siblingIds?.length ?? 0) > 1) tools.append(versionNav(m));
  if (m.messageType === 'user') {
    tools.append(
      el('button', { type: 'button', className: 'edit', textContent: 'Edit', onclick: () => editPrompt(m) }),
    );
  } else {
    tools.append(
      el('button', {
        type: 'button',
        className: 'regenerate',
        textContent: 'Regenerate',
        onclick: () => regenerate(m),
      }),
      ...Object.entries(RATINGS).map(([rating, { label, icon }]) => {
        const b = el('button', { type: 'button', className: `rate ${rating}`, ariaLabel: label, title: label }, icon());
        b.setAttribute('aria-pressed', String(m.feedback?.rating === rating));
        b.onclick = () => rate(m, rating, tools).catch((e) => showError('prompt-error', e.message));
        return b;
      }),
    );
  }
  return tools;
}

/** Thumbs up or down; pressing the pressed one again takes the rating back. */
async function rate(m, rating, tools) {
  const pressed = tools.querySelector(`.rate.${rating}`).getAttribute('aria-pressed') === 'true';
  const path = `/chat/${session.current.id}/messages/${m.id}/feedback`;
  await (pressed ? call('DELETE', path) : call('PUT', path, { rating }));
  for (const b of tools.querySelectorAll('.rate'))
    b.setAttribute('aria-pressed', String(!pressed && b.classList.contains(rating)));
}

/** The messages shown from `li` on leave the page (a new version replaces them). */
function cutFrom(li) {
  while (li.nextSibling) li.nextSibling.remove();
  li.remove();
}

/** Edit: the prompt's text in place; sending it starts a branch beside the original. */
function editPrompt(m) {
  const li = $('messages').querySelector(`li[data-message-id="${m.id}"]`);
  if (!li || li.querySelector('form')) return;
  const area = el('textarea', { className: 'edit-text', value: m.message, rows: 2, ariaLabel: 'Edited message' });
  const form = el(
    'form',
    { className: 'edit-form' },
    area,
    el('button', { type: 'submit', className: 'primary', textContent: 'Send edit' }),
    el('button', { type: 'button', textContent: 'Cancel', onclick: () => form.replaceWith(li.querySelector('.text')) }),
  );
  const text = li.querySelector('.text');
  text.replaceWith(form);
  form.onsubmit = guard('prompt-error', async () => {
    if (!area.value.trim()) return;
    cutFrom(li);
    await replying(() => send(area.value, $('stream').checked, { parentId: m.parentId ?? null }));
    await reloadChat();
  });
  area.focus();
}

/** Regenerate: a new reply to the same prompt, streamed in place of this one. */
async function regenerate(m) {
  const li = $('messages').querySelector(`li[data-message-id="${m.id}"]`);
  if (!li || session.sending) return;
  cutFrom(li);
  await replying(() => send(undefined, $('stream').checked, { regenerate: m.id })).catch((e) =>
    showError('prompt-error', e.message),
  );
  await reloadChat();
}

/** While a reply is being generated, the prompt waits; its tokens are counted once it ends. */
async function replying(fn) {
  session.sending = true;
  updatePromptState();
  try {
    await fn();
  } finally {
    session.sending = false;
    updatePromptState();
    void refreshUsage();
  }
}

/** The prompt form's send: the prompt and its reply, then their controls once they are stored. */
export async function sendPrompt(prompt, stream) {
  await replying(() => send(prompt, stream));
  await addTools(session.current.id);
}

/** The controls of the messages just sent, once they are stored (read back as the branch's end). */
async function addTools(chatId) {
  const { data } = await call('GET', `/chat/${chatId}/messages?limit=100`);
  if (session.current?.id !== chatId) return;
  for (const m of data.slice(-2)) {
    const li = $('messages').querySelector(`li[data-message-id="${m.id}"]`) ?? untagged(m);
    if (!li || li.querySelector('.tools') || m.type !== 'message') continue;
    li.dataset.messageId = m.id;
    li.append(messageTools(m));
  }
}

/** The prompt just sent is on the page without its id until the branch is read back. */
const untagged = (m) =>
  m.messageType === 'user' ? [...$('messages').querySelectorAll('li.user:not([data-message-id])')].at(-1) : undefined;

/** The open chat as a file (an attachment the API names), saved through a download link. */
export async function exportChat(format) {
  const res = await raw('GET', `/chat/${session.current.id}/export?format=${format}`);
  if (!res.ok) throw await answerError(res);
  const name =
    /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ??
    `chat.${format === 'json' ? 'json' : 'md'}`;
  const link = el('a', { href: URL.createObjectURL(await res.blob()), download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

function showShare(url) {
  $('share-panel').hidden = !url;
  $('share-url').value = url ?? '';
}

export async function share() {
  const { data } = await call('POST', `/chat/${session.current.id}/share`);
  showShare(new URL(data.url, location.href).href);
  $('share-url').select();
}

export async function unshare() {
  await call('DELETE', `/chat/${session.current.id}/share`);
  showShare(undefined);
}
