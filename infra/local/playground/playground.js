// The playground: plain JavaScript on the public API (the same calls any client makes), plus the
// local identity provider's sign-in endpoint. Served by `npm start` only.
const api = '/api/v1';
const $ = (id) => document.getElementById(id);
let token = sessionStorage.getItem('serviceToken');
let current; // the open chat

function showError(message) {
  $('error').textContent = message ?? '';
}

/** One API call; answers the envelope's data, throws the envelope's message. */
async function call(method, path, body) {
  const res = await fetch(api + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body && { 'content-type': 'application/json' }) },
    ...(body && { body: JSON.stringify(body) }),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw Object.assign(new Error(json.message ?? `HTTP ${res.status}`), { status: res.status });
  return { data: json.data, status: res.status, headers: res.headers };
}

function el(tag, props = {}, ...children) {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
}

// --- sign-in -------------------------------------------------------------------------------

async function signIn(email, name) {
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

async function showApp() {
  const user = JSON.parse(sessionStorage.getItem('user') ?? '{}');
  $('who').textContent = `signed in as ${user.email ?? '?'}`;
  $('sign-in').hidden = true;
  $('app').hidden = false;
  await listChats();
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
  $('chats').replaceChildren(
    ...chats.map((c) => {
      const li = el('li', {
        textContent: `${c.chatName} (${c.type})`,
        className: c.id === current?.id ? 'current' : '',
      });
      li.dataset.chatId = c.id;
      li.onclick = () => openChat(c.id).catch((e) => showError(e.message));
      return li;
    }),
  );
}

async function openChat(chatId) {
  // Load first, then show: a prompt sent into a chat still loading would be wiped by its history.
  const [{ data: chat }, { data: messages }] = await Promise.all([
    call('GET', `/chat/${chatId}`),
    call('GET', `/chat/${chatId}/messages?limit=100`),
  ]);
  current = chat;
  $('messages').replaceChildren(
    ...messages.map((m) =>
      messageItem(m.messageType === 'ai' ? 'ai' : m.type === 'file' ? 'file' : 'user', m.message, m.sources),
    ),
  );
  $('upload-form').hidden = chat.type !== 'file';
  renderFiles(chat.files);
  $('chat-title').textContent = `${chat.chatName} · ${chat.type} chat`;
  $('chat').hidden = false;
  await listChats();
}

function renderFiles(files) {
  $('files').replaceChildren(
    ...files.map((f) => el('div', { className: 'file-status', textContent: `File ${f.fileName}: ${describeFile(f)}` })),
  );
}

function describeFile(f) {
  const p = f.progress;
  if (!p) return f.status + (f.failure ? ` (${f.failure.message})` : '');
  const of = (x) => `${x.done}${x.total !== undefined ? ` of ${x.total}` : ''}`;
  return `${f.status}, stage ${p.stage}, pages ${of(p.pages)}, parts ${of(p.parts)}`;
}

// --- messages ------------------------------------------------------------------------------

function messageItem(kind, text, sources) {
  const li = el('li', { className: kind });
  li.append(el('span', { className: 'text', textContent: text }));
  if (sources) li.append(citations(sources));
  return li;
}

/** Each citation's file, page and quote; any other field a source carries is shown as a tag. */
function citations(sources) {
  return el(
    'ol',
    { className: 'citations' },
    ...sources.map((s) => {
      const { fileId, fileName, page, quote, chunk: _chunk, score: _score, ...rest } = s;
      const tags = Object.entries(rest).map(([k, v]) =>
        el('span', { className: 'tag', textContent: v === true ? k : `${k}: ${JSON.stringify(v)}` }),
      );
      return el(
        'li',
        { className: 'citation' },
        el('b', { textContent: `${fileName ?? fileId}, page ${page}` }),
        ...tags,
        el('div', { className: 'quote', textContent: `“${quote}”` }),
      );
    }),
  );
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
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue; // a keep-alive comment
        const [field, ...rest] = line.split(':');
        const text = rest.join(':').replace(/^ /, '');
        if (field === 'event') event = text;
        else if (field === 'data') data.push(text);
      }
      if (data.length) yield { event, data: data.join('\n') };
    }
  }
}

async function send(prompt, stream) {
  $('messages').append(messageItem('user', prompt));
  const reply = messageItem('ai', '');
  $('messages').append(reply);
  const text = reply.querySelector('.text');
  if (!stream) {
    const { data } = await call('POST', '/message/logged-in', { chatId: current.id, prompt });
    text.textContent = data.response;
    reply.dataset.messageId = data.messageId;
    if (data.sources) reply.append(citations(data.sources));
    return;
  }
  const res = await fetch(`${api}/message/logged-in`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ chatId: current.id, prompt, stream: true }),
  });
  if (!res.ok) throw new Error((await res.json()).message);
  for await (const { event, data } of readEvents(res.body)) {
    if (data === '[DONE]') break;
    const payload = JSON.parse(data);
    if (event === 'start') reply.dataset.messageId = payload.messageId;
    else if (event === 'message') text.textContent += payload.content;
    else if (event === 'sources') reply.append(citations(payload));
    else if (event === 'error') showError(payload.message);
  }
  reply.classList.add('done');
}

// --- PDF upload and ingestion --------------------------------------------------------------

/** PUT to the presigned URL with upload progress (XMLHttpRequest reports it; fetch does not). */
function put(url, file, headers, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() !== 'content-length') xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => (xhr.status < 300 ? resolve() : reject(new Error(`Upload failed: HTTP ${xhr.status}`)));
    xhr.onerror = () => reject(new Error('Upload failed (network or CORS)'));
    xhr.send(file);
  });
}

async function uploadPdf(file) {
  const status = $('ingest-status');
  const bar = $('upload-progress');
  bar.hidden = false;
  bar.value = 0;
  status.textContent = 'uploading…';
  const { data: up } = await call('POST', '/upload', {
    fileName: file.name,
    contentType: 'application/pdf',
    size: file.size,
  });
  await put(up.uploadUrl, file, up.uploadHeaders, (fraction) => (bar.value = fraction));
  bar.value = 1;
  status.textContent = 'uploaded; ingesting…';
  let { data } = await call('POST', '/message/pdf', { url: up.downloadUrl, fileId: up.fileId, chatId: current.id });
  let info = data.embeddingsData;
  while (info.status === 'processing') {
    status.textContent = `ingesting: ${describeFile(info)}`;
    await new Promise((r) => setTimeout(r, 1000));
    ({ data } = await call('GET', `/message/pdf/${up.fileId}`));
    info = data.embeddingsData;
  }
  status.textContent = `${file.name}: ${describeFile(info)}`;
  status.dataset.status = info.status;
  await openChat(current.id);
  status.textContent = `${file.name}: ${describeFile(info)}`;
}

// --- wiring --------------------------------------------------------------------------------

const guard = (fn) => (event) => {
  event.preventDefault();
  showError('');
  fn().catch((e) => showError(e.message));
};
$('sign-in-form').onsubmit = guard(() => signIn($('email').value, $('name').value));
$('new-chat').onsubmit = guard(async () => {
  const { data } = await call('POST', '/chat', {
    type: $('chat-type').value,
    ...($('chat-name').value && { name: $('chat-name').value }),
  });
  $('chat-name').value = '';
  await openChat(data.id);
});
$('prompt-form').onsubmit = guard(async () => {
  const prompt = $('prompt').value;
  if (!prompt.trim()) return;
  $('prompt').value = '';
  await send(prompt, $('stream').checked);
});
$('upload-form').onsubmit = guard(async () => {
  const file = $('pdf').files[0];
  if (file) await uploadPdf(file);
});
if (token) showApp().catch(() => sessionStorage.clear());
