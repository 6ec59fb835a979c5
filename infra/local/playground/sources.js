// A reply's text with each [n] a link to its source, and the sources listed under it: cited
// first, the rest set apart, each quote once, each opening its page (page-view.js).

import { el } from './api.js';
import { isPdfSource, placeOf, showPage } from './page-view.js';

/** Presigned GET URLs of the PDFs uploaded from this browser (citations open them at their page). */
const fileLinks = JSON.parse(sessionStorage.getItem('fileLinks') ?? '{}');

export function rememberFileLink(fileId, url) {
  fileLinks[fileId] = url;
  sessionStorage.setItem('fileLinks', JSON.stringify(fileLinks));
}

/** A reply: its text with each [n] a link to its source, and the sources (cited, then the rest). */
export function replyItem(text, messageId, sources, cited) {
  const li = el('li', { className: 'ai' });
  if (messageId) li.dataset.messageId = messageId;
  li.append(el('span', { className: 'text', textContent: text }));
  if (sources) renderReply(li, text, sources, cited);
  return li;
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

export function renderReply(li, text, sources, cited) {
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
 * One source: file and place (a link opening the PDF at that page when this browser uploaded it)
 * and its quote, a button showing the page with the quote highlighted.
 */
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
