// The playground: plain JavaScript on the public API (the same calls any client makes), plus the
// local identity provider's sign-in endpoint. Served by `npm start` only.
import { webhooksPanel } from './webhooks.js';

const api = '/api/v1';
const $ = (id) => document.getElementById(id);
const POLL_MS = 1000;

let token = sessionStorage.getItem('serviceToken');
let current; // the open chat: { id, chatName, type, files }
let polling; // the timer refreshing the open chat's files while one is being read
let sending = false;
let streaming; // the reply being streamed into the page: { chatId, messageId }

/** Presigned GET URLs of the PDFs uploaded from this browser (citations open them at their page). */
const fileLinks = JSON.parse(sessionStorage.getItem('fileLinks') ?? '{}');

function el(tag, props = {}, ...children) {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children.filter((c) => c !== undefined && c !== null && c !== false));
  return e;
}

/** Shows (or clears) the error beside the control that caused it. */
function showError(id, message) {
  $(id).textContent = message ?? '';
}

/**
 * The error of an answer that is not ok: the envelope's message. A 401 means the stored token is
 * no longer accepted: the page signs out, saying why.
 */
async function answerError(res) {
  const json = await res.json().catch(() => ({}));
  if (res.status === 401) signOut('Your session has ended: sign in again.');
  return new Error(json.message ?? `HTTP ${res.status}`);
}

/** One API call; answers the envelope's data, throws the envelope's message. */
async function call(method, path, body) {
  const res = await fetch(api + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body && { 'content-type': 'application/json' }) },
    ...(body && { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw await answerError(res);
  const json = await res.json().catch(() => ({}));
  return { data: json.data, headers: res.headers };
}

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
  token = json.data.token;
  sessionStorage.setItem('serviceToken', token);
  sessionStorage.setItem('user', JSON.stringify(json.data.user));
  await showApp();
}

function signOut(message) {
  stopPolling();
  closePage();
  token = undefined;
  current = undefined;
  sessionStorage.removeItem('serviceToken');
  sessionStorage.removeItem('user');
  $('new-key').hidden = true; // a key is shown once, to the one who made it
  $('new-key-value').textContent = '';
  webhooks.reset();
  $('app').hidden = true;
  $('account').hidden = true;
  $('sign-in').hidden = false;
  showError('sign-in-error', message);
  $('email').focus();
}

async function showApp() {
  const user = JSON.parse(sessionStorage.getItem('user') ?? '{}');
  $('who').textContent = `Signed in as ${user.email ?? '?'}`;
  $('sign-in').hidden = true;
  $('account').hidden = false;
  $('app').hidden = false;
  $('welcome').hidden = current !== undefined;
  await Promise.all([listChats(), listOrders(), showUsage(), listKeys(), webhooks.list()]);
}

// --- chats ---------------------------------------------------------------------------------

async function listChats() {
  const chats = [];
  let cursor = '';
  do {
    const page = await call('GET', `/chat?limit=100${cursor && `&cursor=${encodeURIComponent(cursor)}`}`);
    chats.push(...page.data);
    cursor = page.headers.get('x-next-cursor') ?? '';
  } while (cursor);
  $('no-chats').hidden = chats.length > 0;
  $('chats').replaceChildren(
    ...chats.map((c) => {
      const button = el(
        'button',
        { type: 'button' },
        el('span', { textContent: c.chatName }),
        el('span', { className: 'kind', textContent: c.type === 'file' ? 'file chat' : 'text chat' }),
      );
      button.dataset.chatId = c.id;
      if (c.id === current?.id) button.setAttribute('aria-current', 'true');
      button.onclick = () => openChat(c.id).catch((e) => showError('new-chat-error', e.message));
      return el('li', {}, button);
    }),
  );
}

async function openChat(chatId) {
  // Load first, then show: a prompt sent into a chat still loading would be wiped by its history.
  const [{ data: chat }, { data: messages }] = await Promise.all([
    call('GET', `/chat/${chatId}`),
    call('GET', `/chat/${chatId}/messages?limit=100`),
  ]);
  stopPolling(); // the chat left behind is not read again; this one starts its own if it needs it
  if (chatId !== current?.id) closePage();
  current = chat;
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

function showTitle(chatName) {
  current.chatName = chatName;
  $('chat-title').textContent = `${chatName} · ${current.type === 'file' ? 'file chat' : 'text chat'}`;
}

/** Reads the open chat again (its active branch, each message's versions). */
const reloadChat = () => openChat(current.id);

// --- files of a file chat: their state, live while one is read ------------------------------

const secondsSince = (iso) => Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
const ofTotal = (x) => (x.total !== undefined ? `${x.done} of ${x.total}` : `${x.done}`);
const STAGES = {
  fetch: 'downloading',
  extract: 'reading the text',
  ocr: 'recognising scanned pages',
  embed: 'indexing',
};

/** What a file's row says: its state, then what is known (live progress while processing). */
function describeFile(f) {
  const p = f.progress;
  if (f.status === 'failed') return f.failure?.message ?? 'Reading it failed.';
  if (f.status === 'uploaded') return 'Uploaded, not read yet.';
  if (f.status === 'completed') {
    const ocr = f.ocrPages ? `, ${f.ocrPages} by OCR` : '';
    const count = (n, what) => `${n} ${what}${n === 1 ? '' : 's'}`;
    return `${count(f.pages ?? p?.pages.total ?? 0, 'page')} read${ocr}; ${count(f.chunks ?? 0, 'passage')} indexed.`;
  }
  const parts = [`${STAGES[p?.stage] ?? p?.stage ?? 'starting'}`];
  if (p?.pages.total !== undefined) parts.push(`pages ${ofTotal(p.pages)}`);
  if (p?.ocrPages) parts.push(`OCR pages ${ofTotal(p.ocrPages)}`);
  if (p?.parts.total !== undefined) parts.push(`parts ${ofTotal(p.parts)}`);
  if (f.startedAt) parts.push(`${secondsSince(f.startedAt)} s`);
  return `${parts.join(' · ')}`;
}

function renderFiles(files) {
  current.files = files;
  $('files').replaceChildren(
    ...(files.length
      ? files.map((f) => {
          const li = el(
            'li',
            { className: 'file-status' },
            el('span', { className: 'name', textContent: f.fileName }),
            el('span', { className: 'state', textContent: f.status === 'processing' ? 'reading…' : f.status }),
            el('span', { className: 'detail', textContent: describeFile(f) }),
          );
          li.dataset.status = f.status;
          li.dataset.stage = f.progress?.stage ?? '';
          return li;
        })
      : [el('li', { className: 'empty', textContent: 'No document yet: add one below, then ask about it.' })]),
  );
  updatePromptState();
  if (files.some((f) => f.status === 'processing')) startPolling();
  else stopPolling();
}

/** Reads the open chat's files again a second after each answer (never two reads at once) while one is being read. */
function startPolling() {
  if (polling) return;
  const chatId = current.id;
  const poll = async () => {
    try {
      const { data } = await call('GET', `/chat/${chatId}`);
      polling = undefined;
      if (current?.id === chatId) renderFiles(data.files ?? []);
    } catch (e) {
      stopPolling();
      showError('upload-error', e.message);
    }
  };
  polling = setTimeout(poll, POLL_MS);
}

function stopPolling() {
  clearTimeout(polling);
  polling = undefined;
}

/** The prompt is usable when the chat can answer: a file chat needs a file read to the end, and none still being read. */
function updatePromptState() {
  let reason = '';
  if (sending) reason = 'Waiting for the reply…';
  else if (current?.type === 'file') {
    const files = current.files ?? [];
    const reading = files.find((f) => f.status === 'processing' || f.status === 'uploaded');
    if (!files.length) reason = 'Add a document first: a file chat answers from its files.';
    else if (reading) reason = `Wait until ${reading.fileName} is read (its progress is shown above).`;
    else if (!files.some((f) => f.status === 'completed')) reason = 'No file could be read: add another document.';
  }
  $('prompt').disabled = reason !== '';
  $('send').disabled = reason !== '';
  $('prompt-state').textContent = reason;
}

// --- messages ------------------------------------------------------------------------------

/** A reply: its text with each [n] a link to its source, and the sources (cited, then the rest). */
function replyItem(text, messageId, sources, cited) {
  const li = el('li', { className: 'ai' });
  if (messageId) li.dataset.messageId = messageId;
  li.append(el('span', { className: 'text', textContent: text }));
  if (sources) renderReply(li, text, sources, cited);
  return li;
}

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
    call('PUT', `/chat/${current.id}`, { activeLeafId: m.siblingIds[i] })
      .then(reloadChat)
      .catch((e) => showError('prompt-error', e.message));
  const nav = el(
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
  return nav;
}

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
      ...['up', 'down'].map((rating) => {
        const b = el('button', {
          type: 'button',
          className: `rate ${rating}`,
          ariaLabel: rating === 'up' ? 'Good reply' : 'Bad reply',
        });
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
  const path = `/chat/${current.id}/messages/${m.id}/feedback`;
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
  if (!li || sending) return;
  cutFrom(li);
  await replying(() => send(undefined, $('stream').checked, { regenerate: m.id })).catch((e) =>
    showError('prompt-error', e.message),
  );
  await reloadChat();
}

/** While a reply is being generated, the prompt waits. */
async function replying(fn) {
  sending = true;
  updatePromptState();
  try {
    await fn();
  } finally {
    sending = false;
    updatePromptState();
  }
}

const citeId = (li, n) => `cite-${li.dataset.messageId ?? 'reply'}-${n}`;

/** A quote as compared for duplicates: spacing and case do not make two quotes different. */
const quoteKey = (s) => JSON.stringify([s.fileId, s.page, s.quote.replace(/\s+/g, ' ').trim().toLowerCase()]);

/**
 * The sources shown, each once: a quote of the same file and page met again is the first one
 * (cited when any of its copies is). `shownAs` maps every [n] to the number it is shown under.
 */
function distinctSources(sources, isCited) {
  const shown = [];
  const shownAs = new Map();
  const firstByKey = new Map();
  sources.forEach((s, i) => {
    const n = i + 1;
    const key = quoteKey(s);
    let entry = firstByKey.get(key);
    if (!entry) {
      entry = { s, n, cited: false };
      firstByKey.set(key, entry);
      shown.push(entry);
    }
    entry.cited ||= isCited(s, n);
    shownAs.set(n, entry);
  });
  return { shown, shownAs };
}

function renderReply(li, text, sources, cited) {
  const isCited = (s, n) => (cited ? cited.has(n) : s.cited === true);
  const { shown, shownAs } = distinctSources(sources, isCited);
  const body = li.querySelector('.text');
  body.replaceChildren();
  let last = 0;
  let previous; // the marker just written: "[1][3]" of one quote shows one marker
  for (const m of text.matchAll(/\[(\d+)\]/g)) {
    const entry = shownAs.get(Number(m[1]));
    if (!entry) continue;
    const between = text.slice(last, m.index);
    body.append(between);
    last = m.index + m[0].length;
    if (entry === previous && between === '') continue;
    previous = entry;
    const marker = el('a', { className: 'marker', href: `#${citeId(li, entry.n)}`, textContent: `[${entry.n}]` });
    // The link also moves to the source in the list; the page opens beside the chat.
    marker.addEventListener('click', () => showPage(entry.s));
    body.append(marker);
  }
  body.append(text.slice(last));

  const citedOnes = shown.filter((e) => e.cited);
  const others = shown.filter((e) => !e.cited);
  const list = (items) => el('ol', { className: 'citations' }, ...items.map((e) => citationItem(li, e)));
  li.querySelector('.sources')?.remove();
  li.append(
    el(
      'div',
      { className: 'sources' },
      citedOnes.length > 0 && el('h3', { textContent: 'Cited' }),
      citedOnes.length > 0 && list(citedOnes),
      others.length > 0 &&
        el('details', {}, el('summary', { textContent: `Also retrieved, not cited (${others.length})` }), list(others)),
    ),
  );
}

/**
 * One source: file and page (a link opening the PDF at that page when this browser uploaded it)
 * and its quote, a button showing the page with the quote highlighted.
 */
/** Where a source is, in its format's words: page 2, slide 4, Stations A152:C152, Guide › Install. */
function placeOf(s) {
  const at = s.location;
  if (!at || at.type === 'page') return `page ${s.page}`;
  if (at.type === 'slide') return `slide ${at.slide}${at.title ? ` (${at.title})` : ''}`;
  if (at.type === 'sheet') return `sheet ${at.sheet} ${at.range}`;
  return at.path.length ? at.path.join(' › ') : `part ${s.part}`;
}

const isPdfSource = (s) => !s.location || s.location.type === 'page';

function citationItem(li, { s, n, cited }) {
  const label = `${s.fileName ?? s.fileId}, ${placeOf(s)}`;
  const link = isPdfSource(s) ? fileLinks[s.fileId] : undefined;
  const where = link
    ? el('a', { href: `${link}#page=${s.page}`, target: '_blank', rel: 'noopener', textContent: label })
    : el('b', {
        textContent: label,
        title: isPdfSource(s) ? 'Only the browser that uploaded this PDF has its link' : '',
      });
  const item = el(
    'li',
    { className: 'citation', id: citeId(li, n), value: n },
    where,
    cited ? el('span', { className: 'badge', textContent: ' cited' }) : undefined,
    s.ocr ? el('span', { className: 'kind', textContent: ' (read by OCR)' }) : undefined,
    s.verified === false
      ? el('span', { className: 'kind', textContent: ' (not found word for word on the page)' })
      : undefined,
    el('button', {
      type: 'button',
      className: 'quote',
      title: 'Show the page with this passage highlighted',
      textContent: `“${s.quote}”`,
      onclick: () => showPage(s),
    }),
  );
  item.dataset.cited = String(cited);
  return item;
}

// --- the cited page, its passage highlighted ---------------------------------------------------

let pageShown = 0; // counts the pages asked for: an answer arriving after a newer click is dropped
let pageOpener; // the control that opened the page view: focus goes back to it when it closes

/**
 * Shows the source's page beside the chat: the page's image (GET …/pages/{page}) with a rectangle
 * over each of the quote's boxes (fractions of the page, origin top-left, so they scale with the
 * image), and the page's text around the quote with the quote marked. `data-state` says where it
 * is: loading, shown (the image has loaded) or failed.
 */
async function showPage(s) {
  if (!isPdfSource(s)) return showPart(s);
  const asked = ++pageShown;
  const view = $('page-view');
  if (view.hidden) pageOpener = document.activeElement;
  view.hidden = false;
  document.body.classList.add('page-open');
  $('page-view-close').focus({ preventScroll: true });
  view.dataset.state = 'loading';
  $('page-view-title').textContent = `${s.fileName ?? 'PDF'}, page ${s.page}`;
  $('page-view-state').textContent = 'Loading the page…';
  $('page-frame').replaceChildren();
  $('page-view-passage').replaceChildren();
  try {
    const { data: page } = await call('GET', `/message/pdf/${encodeURIComponent(s.fileId)}/pages/${s.page}`);
    if (asked !== pageShown) return;
    const frame = $('page-frame');
    frame.style.aspectRatio = `${page.width} / ${page.height}`;
    const image = el('img', { className: 'page-image', alt: `Page ${page.page} of ${s.fileName ?? 'the PDF'}` });
    const boxes = s.boxes ?? [];
    const highlights = boxes.map((b) => {
      const mark = el('div', { className: 'highlight' });
      Object.assign(mark.style, {
        left: `${b.x * 100}%`,
        top: `${b.y * 100}%`,
        width: `${b.width * 100}%`,
        height: `${b.height * 100}%`,
      });
      return mark;
    });
    image.onload = () => {
      if (asked !== pageShown) return;
      view.dataset.state = 'shown';
      $('page-view-state').textContent = boxes.length
        ? ''
        : 'The quote could not be placed on this page: it is shown below, without a highlight.';
    };
    image.onerror = () => {
      if (asked !== pageShown) return;
      view.dataset.state = 'failed';
      $('page-view-state').textContent = 'The page image could not be loaded.';
    };
    frame.replaceChildren(image, ...highlights);
    image.src = page.imageUrl;
    $('page-view-passage').replaceChildren(...passageOf(page.text, s));
    highlights[0]?.scrollIntoView({ block: 'center' });
  } catch (e) {
    if (asked !== pageShown) return;
    view.dataset.state = 'failed';
    $('page-view-state').textContent = e.message;
  }
}

/** A part of a document that is not a PDF: its text around the quote, the quote marked (no image). */
async function showPart(s) {
  const asked = ++pageShown;
  const view = $('page-view');
  if (view.hidden) pageOpener = document.activeElement;
  view.hidden = false;
  document.body.classList.add('page-open');
  $('page-view-close').focus({ preventScroll: true });
  view.dataset.state = 'loading';
  $('page-view-title').textContent = `${s.fileName ?? 'Document'}, ${placeOf(s)}`;
  $('page-view-state').textContent = 'Loading the passage…';
  $('page-frame').replaceChildren();
  $('page-view-passage').replaceChildren();
  try {
    const { data: part } = await call('GET', `/files/${encodeURIComponent(s.fileId)}/parts/${s.part}`);
    if (asked !== pageShown) return;
    view.dataset.state = 'shown';
    $('page-view-state').textContent = '';
    $('page-view-passage').replaceChildren(...passageOf(part.text, s));
  } catch (e) {
    if (asked !== pageShown) return;
    view.dataset.state = 'failed';
    $('page-view-state').textContent = e.message;
  }
}

/** The page's text around the quote (its offsets index that text), the quote marked; the bare quote without them. */
function passageOf(text, s) {
  const AROUND = 160;
  if (typeof s.charStart !== 'number' || typeof s.charEnd !== 'number' || s.charEnd > text.length)
    return [`“${s.quote}”`];
  const from = Math.max(0, s.charStart - AROUND);
  const to = Math.min(text.length, s.charEnd + AROUND);
  return [
    from > 0 ? '…' : '',
    text.slice(from, s.charStart),
    el('mark', { textContent: text.slice(s.charStart, s.charEnd) }),
    text.slice(s.charEnd, to),
    to < text.length ? '…' : '',
  ];
}

function closePage() {
  pageShown++;
  if ($('page-view').hidden) return;
  $('page-view').hidden = true;
  document.body.classList.remove('page-open');
  $('page-frame').replaceChildren();
  if (pageOpener?.isConnected) pageOpener.focus();
  pageOpener = undefined;
}

/** Reads a text/event-stream body as it arrives (fetch + ReadableStream), event by event. */
async function* readEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, '\n');
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let id;
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue; // a keep-alive comment
        const [field, ...rest] = line.split(':');
        const text = rest.join(':').replace(/^ /, '');
        if (field === 'event') event = text;
        else if (field === 'id') id = Number(text);
        else if (field === 'data') data.push(text);
      }
      if (data.length) yield { id, event, data: data.join('\n') };
    }
  }
}

/** An `event: error` of the reply itself (not a dropped connection): it is not resumed. */
class ReplyFailed extends Error {}

/**
 * Reads a reply's events into its list item, remembering the last event id in `state`; true
 * when the stream ended with [DONE], false when the connection dropped before.
 */
async function readReply(res, li, state) {
  const text = li.querySelector('.text');
  for await (const { id, event, data } of readEvents(res.body)) {
    if (data === '[DONE]') return true;
    if (id !== undefined) state.lastId = id;
    const payload = JSON.parse(data);
    if (event === 'start') {
      li.dataset.messageId = payload.messageId;
      showStop({ chatId: payload.chatId, messageId: payload.messageId });
    } else if (event === 'message') text.textContent += payload.content;
    else if (event === 'sources') state.sources = payload;
    else if (event === 'citations') state.cited = new Set(payload.cited);
    else if (event === 'stopped') li.classList.add('stopped');
    else if (event === 'title') titled(payload.chatName);
    else if (event === 'error') throw new ReplyFailed(payload.message);
  }
  return false;
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Follows a reply by its id from the event after `state.lastId` to its end, resuming after a
 * dropped connection (Last-Event-ID) a few times, a little later each time.
 */
async function followStream(li, chatId, state) {
  const messageId = li.dataset.messageId;
  showStop({ chatId, messageId });
  try {
    for (let attempt = 0; attempt < 6; attempt++) {
      if (attempt > 0) await pause(300 * 2 ** attempt);
      try {
        const res = await fetch(`${api}/chat/${chatId}/messages/${messageId}/stream`, {
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'text/event-stream',
            'last-event-id': String(state.lastId),
          },
        });
        if (!res.ok) throw new ReplyFailed((await answerError(res)).message);
        if (await readReply(res, li, state)) return finishReply(li, state);
      } catch (e) {
        if (e instanceof ReplyFailed) throw e;
      }
    }
    throw new Error('The connection keeps dropping: reload the page to follow the reply.');
  } catch (e) {
    li.classList.add('failed');
    throw e;
  } finally {
    li.classList.add('done');
    hideStop(messageId);
  }
}

function finishReply(li, state) {
  const text = li.querySelector('.text');
  if (state.sources) renderReply(li, text.textContent, state.sources, state.cited ?? new Set());
}

function showStop(reply) {
  streaming = reply;
  $('stop').hidden = false;
  $('stop').disabled = false;
}

function hideStop(messageId) {
  if (streaming && streaming.messageId !== messageId) return;
  streaming = undefined;
  $('stop').hidden = true;
}

/** A chat created without a name was titled by its first exchange. */
function titled(chatName) {
  if (!chatName || !current) return;
  showTitle(chatName);
  void listChats();
}

/**
 * A prompt and its reply, whole or streamed into the page: a new prompt (under `parentId` when
 * given: an edit), or, with `regenerate`, a new reply to the prompt of that ai message.
 */
async function send(prompt, stream, { parentId, regenerate } = {}) {
  $('no-messages').hidden = true;
  if (prompt !== undefined)
    $('messages').append(el('li', { className: 'user' }, el('span', { className: 'text', textContent: prompt })));
  const reply = replyItem('');
  $('messages').append(reply);
  const text = reply.querySelector('.text');
  const chatId = current.id;
  const state = { lastId: 0 };
  const [path, body] = regenerate
    ? [`/chat/${chatId}/messages/${regenerate}/regenerate`, {}]
    : ['/message/logged-in', { chatId, prompt, ...(parentId !== undefined && { parentId }) }];
  try {
    if (!stream) {
      const { data } = await call('POST', path, body);
      reply.dataset.messageId = data.messageId;
      text.textContent = data.response;
      if (data.sources) renderReply(reply, data.response, data.sources);
      titled(data.chatName);
    } else {
      const res = await fetch(api + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ ...body, stream: true }),
      });
      if (!res.ok) throw await answerError(res);
      let ended = false;
      try {
        ended = await readReply(res, reply, state);
      } catch (e) {
        if (e instanceof ReplyFailed || !reply.dataset.messageId) throw e;
      }
      // The connection dropped before the end: the reply goes on on the server; follow it.
      if (!ended) return await followStream(reply, chatId, state);
      finishReply(reply, state);
    }
  } catch (e) {
    reply.classList.add('failed');
    if (!text.textContent) text.textContent = 'No reply.';
    throw e;
  } finally {
    reply.classList.add('done');
    hideStop(reply.dataset.messageId);
  }
}

// --- PDF upload and ingestion --------------------------------------------------------------

/** PUT to the presigned URL with upload progress (XMLHttpRequest reports it; fetch does not). */
function put(url, file, headers, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() !== 'content-length') xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => (xhr.status < 300 ? resolve() : reject(new Error(`The upload failed: HTTP ${xhr.status}`)));
    xhr.onerror = () => reject(new Error('The upload failed (network or CORS)'));
    xhr.send(file);
  });
}

/** What the service reads (it decides from the bytes; the name only keeps obvious mistakes here). */
const DOCUMENT_TYPES = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  html: 'text/html',
  htm: 'text/html',
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
};

async function uploadPdf(file) {
  if (!file) throw new Error('Choose a document first.');
  const extension = /\.([a-z]+)$/i.exec(file.name)?.[1]?.toLowerCase() ?? '';
  const contentType = DOCUMENT_TYPES[extension];
  if (!contentType) {
    throw new Error(
      `${file.name} is not a document this service reads: choose a PDF, Word, PowerPoint, Excel, HTML, Markdown or text file.`,
    );
  }
  const bar = $('upload-progress');
  bar.hidden = false;
  bar.value = 0;
  $('upload-button').disabled = true;
  try {
    const { data: up } = await call('POST', '/upload', {
      fileName: file.name,
      contentType,
      size: file.size,
    });
    await put(up.uploadUrl, file, up.uploadHeaders, (fraction) => (bar.value = fraction));
    fileLinks[up.fileId] = up.downloadUrl;
    sessionStorage.setItem('fileLinks', JSON.stringify(fileLinks));
    bar.hidden = true;
    $('pdf').value = '';
    // The file's row shows the ingestion from here on (refreshed while it runs).
    await call('POST', '/message/pdf', { url: up.downloadUrl, fileId: up.fileId, chatId: current.id }).catch((e) =>
      showError('upload-error', e.message),
    );
    const { data: chat } = await call('GET', `/chat/${current.id}`);
    renderFiles(chat.files ?? []);
  } finally {
    bar.hidden = true;
    $('upload-button').disabled = false;
  }
}

// --- search, export, share ------------------------------------------------------------------

async function search(q) {
  if (!q.trim()) return $('search-results').replaceChildren();
  const { data } = await call('GET', `/chat/search?q=${encodeURIComponent(q)}&limit=20`);
  $('search-results').replaceChildren(
    ...(data.length
      ? data.map((hit) => {
          const button = el(
            'button',
            { type: 'button', onclick: () => openChat(hit.chatId).catch((e) => showError('search-error', e.message)) },
            el('b', { textContent: hit.chatName }),
            el('span', { className: 'snippet', textContent: hit.snippet }),
          );
          button.dataset.chatId = hit.chatId;
          return el('li', {}, button);
        })
      : [el('li', { className: 'empty', textContent: 'Nothing found.' })]),
  );
}

/** The open chat as a file (an attachment the API names), saved through a download link. */
async function exportChat(format) {
  const res = await fetch(`${api}/chat/${current.id}/export?format=${format}`, {
    headers: { authorization: `Bearer ${token}` },
  });
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

async function share() {
  const { data } = await call('POST', `/chat/${current.id}/share`);
  showShare(new URL(data.url, location.href).href);
  $('share-url').select();
}

async function unshare() {
  await call('DELETE', `/chat/${current.id}/share`);
  showShare(undefined);
}

/** The controls of the messages just sent, once they are stored (read back as the branch's end). */
async function addTools(chatId) {
  const { data } = await call('GET', `/chat/${chatId}/messages?limit=100`);
  if (current?.id !== chatId) return;
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

// --- orders and payments --------------------------------------------------------------------
// An order's payment is made at the payment provider (under npm start, its stand-in) the way a
// web shop's payment form does it: with the provider's publishable key and the order's client
// secret, never through this service. The provider's signed webhook then moves the order.

let paymentProvider; // { apiUrl, publishableKey }, read once from the local pages

/** An order route's call: bare bodies, `{ message }` errors. */
async function bare(method, path, body) {
  const res = await fetch(api + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body && { 'content-type': 'application/json' }) },
    ...(body && { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw await answerError(res);
  return res.json();
}

const money = (cents, currency) =>
  currency ? new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(cents / 100) : '—';

async function listOrders() {
  const [products, orders] = await Promise.all([bare('GET', '/products?limit=100'), bare('GET', '/orders?limit=20')]);
  $('no-products').hidden = products.length > 0;
  $('order-form').hidden = products.length === 0;
  $('order-product').replaceChildren(
    ...products.map((p) =>
      el('option', { value: p.id, textContent: `${p.name} (${money(p.priceCents, p.currency)})` }),
    ),
  );
  $('orders').replaceChildren(...orders.map(orderItem));
}

function orderItem(order) {
  const payment = order.payment ? `payment ${order.payment.status.replace('_', ' ')}` : 'no payment';
  const li = el(
    'li',
    {},
    el('span', { textContent: `${money(order.totalCents, order.currency)} · ${order.status} · ${payment}` }),
  );
  li.dataset.orderId = order.id;
  const payable = order.payment?.clientSecret && ['requires_payment', 'failed'].includes(order.payment.status);
  if (payable) {
    const pay = el('button', { type: 'button', className: 'quiet', textContent: 'Pay' });
    const decline = el('button', { type: 'button', className: 'quiet', textContent: 'Pay (declined card)' });
    pay.onclick = () => payOrder(order, 'pm_card_visa').catch((e) => showError('orders-error', e.message));
    decline.onclick = () =>
      payOrder(order, 'pm_card_chargeDeclined').catch((e) => showError('orders-error', e.message));
    li.append(el('span', { className: 'order-actions' }, pay, decline));
  }
  return li;
}

/** Confirms the order's payment at the provider with a test card, then waits for the webhook to move it. */
async function payOrder(order, card) {
  showError('orders-error', '');
  paymentProvider ??= await fetch('/local-payments/config').then((r) => (r.ok ? r.json() : undefined));
  if (!paymentProvider) throw new Error('No payment provider runs here (npm start runs its stand-in).');
  const res = await fetch(`${paymentProvider.apiUrl}/v1/payment_intents/${order.providerPaymentIntentId}/confirm`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${paymentProvider.publishableKey}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ client_secret: order.payment.clientSecret, payment_method: card }),
  });
  const answer = await res.json().catch(() => ({}));
  if (!res.ok && res.status !== 402) throw new Error(answer.error?.message ?? `HTTP ${res.status}`);
  if (res.status === 402) showError('orders-error', `${answer.error?.message ?? 'Declined'} The order stays New.`);
  // The provider posts its signed event to the service: the order changes when it is applied.
  const before = order.payment.status;
  for (let i = 0; i < 30; i++) {
    const now = await bare('GET', `/orders/${order.id}`);
    if (now.payment?.status !== before || res.status === 402) break;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  await listOrders();
}

// --- API keys: made, listed and revoked with the person's own token ---------------------------

/** GET /me/api-keys: each key's name, scopes and last use, with a Revoke button (never the key itself). */
async function listKeys() {
  $('openai-base').textContent = `${location.origin}${api}/openai`;
  const { data: keys } = await call('GET', '/me/api-keys?limit=100');
  $('keys').replaceChildren(
    ...keys.map((k) =>
      el(
        'li',
        { className: 'key' },
        el('span', {
          textContent: `${k.name} · ${k.scopes.join(', ')} · ${k.lastUsedAt ? `used ${k.lastUsedAt.slice(0, 16).replace('T', ' ')}` : 'never used'}`,
        }),
        el('button', {
          type: 'button',
          className: 'quiet danger',
          textContent: 'Revoke',
          onclick: () =>
            call('DELETE', `/me/api-keys/${k.id}`)
              .then(listKeys)
              .catch((e) => showError('keys-error', e.message)),
        }),
      ),
    ),
  );
}

/** POST /me/api-keys: the new key, shown this once. */
async function createKey(name) {
  const { key } = (await call('POST', '/me/api-keys', { name: name.trim() || 'playground' })).data;
  $('new-key-value').textContent = key;
  $('new-key').hidden = false;
  $('key-name').value = '';
  await listKeys();
}

// --- webhooks: the panel of webhooks.js, on the helpers above -----------------------------------

const webhooks = webhooksPanel({ call, el, $, showError });

// --- the account: usage, export, erasure ----------------------------------------------------

const number = (n) => new Intl.NumberFormat('en').format(n);
const total = (byModel) => Object.values(byModel).reduce((sum, n) => sum + n, 0);
const bytes = (n) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${number(Math.ceil(n / 1024))} KB`);

/** GET /me's usage as a list of what was used against what is allowed. */
async function showUsage() {
  const { usage: u } = (await call('GET', '/me')).data;
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

/** POST /me/export, then its status until the ZIP is ready (built in the background): a download link. */
async function exportAccount() {
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
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } catch (e) {
    $('export-state').textContent = '';
    throw e;
  } finally {
    $('export-account').disabled = false;
  }
}

/** DELETE /me once confirmed: the token stops working at once, so the page signs out. */
async function deleteAccount() {
  if (
    !confirm(
      'Delete your account and everything in it (chats, files, shares)? Orders are kept for accounting, without your name. This cannot be undone.',
    )
  )
    return;
  await call('DELETE', '/me');
  signOut('Your account is deleted. Signing in again with the same email starts a new account.');
}

// --- wiring --------------------------------------------------------------------------------

/** A form's submit: its own error line cleared first, then filled with what went wrong. */
const guard = (errorId, fn) => (event) => {
  event.preventDefault();
  showError(errorId, '');
  fn().catch((e) => showError(errorId, e.message));
};
$('sign-in-form').onsubmit = guard('sign-in-error', () => signIn($('email').value.trim(), $('name').value.trim()));
$('sign-out').onclick = () => signOut();
$('page-view-close').onclick = closePage;
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && !$('page-view').hidden) closePage();
});
$('copy-token').onclick = async () => {
  await navigator.clipboard?.writeText(token).catch(() => undefined);
  $('copy-token').textContent = 'Copied';
  setTimeout(() => ($('copy-token').textContent = 'Copy token'), 1500);
};
$('new-chat').onsubmit = guard('new-chat-error', async () => {
  const type = document.querySelector('input[name="chat-type"]:checked').value;
  const { data } = await call('POST', '/chat', { type, ...($('chat-name').value && { name: $('chat-name').value }) });
  $('chat-name').value = '';
  await openChat(data.id);
  (type === 'file' ? $('pdf') : $('prompt')).focus();
});
$('prompt-form').onsubmit = guard('prompt-error', async () => {
  const prompt = $('prompt').value;
  if (!prompt.trim() || $('prompt').disabled) return;
  $('prompt').value = '';
  try {
    await replying(() => send(prompt, $('stream').checked));
    await addTools(current.id);
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
$('upload-form').onsubmit = guard('upload-error', () => uploadPdf($('pdf').files[0]));
$('order-form').onsubmit = guard('orders-error', async () => {
  const quantity = Number($('order-quantity').value);
  await bare('POST', '/orders', { items: [{ productId: $('order-product').value, quantity }] });
  await listOrders();
});
$('search-form').onsubmit = guard('search-error', () => search($('search').value));
$('key-form').onsubmit = guard('keys-error', () => createKey($('key-name').value));
$('webhook-form').onsubmit = guard('webhooks-error', () => webhooks.create());
$('refresh-usage').onclick = () => showUsage().catch((e) => showError('account-error', e.message));
$('export-account').onclick = () => {
  showError('account-error', '');
  exportAccount().catch((e) => showError('account-error', e.message));
};
$('delete-account').onclick = () => {
  showError('account-error', '');
  deleteAccount().catch((e) => showError('account-error', e.message));
};
$('export-markdown').onclick = () => exportChat('markdown').catch((e) => showError('chat-error', e.message));
$('export-json').onclick = () => exportChat('json').catch((e) => showError('chat-error', e.message));
$('share').onclick = () => share().catch((e) => showError('chat-error', e.message));
$('unshare').onclick = () => unshare().catch((e) => showError('chat-error', e.message));
// Stop: the reply ends where it is, on the server (every stream of it ends with `stopped`).
$('stop').onclick = () => {
  if (!streaming) return;
  $('stop').disabled = true;
  showError('prompt-error', '');
  call('POST', `/chat/${streaming.chatId}/messages/${streaming.messageId}/stop`).catch((e) =>
    showError('prompt-error', e.message),
  );
};
// A stored token the service no longer accepts has already signed out (with why) in call().
if (token) showApp().catch(() => token && signOut());
