// A file chat's documents: uploaded from the browser to a presigned URL, then read by the
// service; each file's row shows its state, live while it is read, and the prompt waits until
// the chat has something to answer from.

import { $, POLL_MS, call, el, session, showError } from './api.js';
import { refreshUsage } from './account.js';
import { rememberFileLink } from './sources.js';

let polling; // the timer refreshing the open chat's files while one is being read

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

const ended = (f) => f.status === 'completed' || f.status === 'failed';

/**
 * The open chat's files as rows. A file seen ending here (completed or failed) changed the
 * account's counts: the panel is read again until it counts at least this chat's pages read.
 */
export function renderFiles(files) {
  const before = new Map((session.current.files ?? []).map((f) => [f.fileId, f.status]));
  session.current.files = files;
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
  if (files.some((f) => ended(f) && before.get(f.fileId) !== f.status)) {
    const pages = files.reduce((sum, f) => sum + (f.status === 'completed' ? (f.pages ?? 0) : 0), 0);
    void refreshUsage((usage) => usage.pages.ingested >= pages);
  }
  if (files.some((f) => f.status === 'processing')) startPolling();
  else stopPolling();
}

/** Reads the open chat's files again a second after each answer (never two reads at once) while one is being read. */
function startPolling() {
  if (polling) return;
  const chatId = session.current.id;
  const poll = async () => {
    try {
      const { data } = await call('GET', `/chat/${chatId}`);
      polling = undefined;
      if (session.current?.id === chatId) renderFiles(data.files ?? []);
    } catch (e) {
      stopPolling();
      showError('upload-error', e.message);
    }
  };
  polling = setTimeout(poll, POLL_MS);
}

export function stopPolling() {
  clearTimeout(polling);
  polling = undefined;
}

/** The prompt is usable when the chat can answer: a file chat needs a file read to the end, and none still being read. */
export function updatePromptState() {
  const { current } = session;
  let reason = '';
  if (session.sending) reason = 'Waiting for the reply…';
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

export async function uploadPdf(file) {
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
  const chatId = session.current.id;
  try {
    const { data: up } = await call('POST', '/upload', {
      fileName: file.name,
      contentType,
      size: file.size,
    });
    void refreshUsage(); // the file and its bytes are counted when its upload is granted
    await put(up.uploadUrl, file, up.uploadHeaders, (fraction) => (bar.value = fraction));
    rememberFileLink(up.fileId, up.downloadUrl);
    bar.hidden = true;
    $('pdf').value = '';
    // The file's row shows the ingestion from here on (refreshed while it runs).
    await call('POST', '/message/pdf', { url: up.downloadUrl, fileId: up.fileId, chatId }).catch((e) =>
      showError('upload-error', e.message),
    );
    const { data: chat } = await call('GET', `/chat/${chatId}`);
    if (session.current?.id === chatId) renderFiles(chat.files ?? []);
  } finally {
    bar.hidden = true;
    $('upload-button').disabled = false;
  }
}
