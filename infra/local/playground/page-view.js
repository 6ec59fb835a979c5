// The cited page beside the chat, its passage highlighted (docs/DECISIONS.md "Checking a
// citation"): a PDF's page image with the quote's boxes over it, or another document's part as
// text, each with the text around the quote marked.

import { $, call, el } from './api.js';

let pageShown = 0; // counts the pages asked for: an answer arriving after a newer click is dropped
let pageOpener; // the control that opened the page view: focus goes back to it when it closes

/** Where a source is, in its format's words: page 2, slide 4, Stations A152:C152, Guide › Install. */
export function placeOf(s) {
  const at = s.location;
  if (!at || at.type === 'page') return `page ${s.page}`;
  if (at.type === 'slide') return `slide ${at.slide}${at.title ? ` (${at.title})` : ''}`;
  if (at.type === 'sheet') return `sheet ${at.sheet} ${at.range}`;
  return at.path.length ? at.path.join(' › ') : `part ${s.part}`;
}

export const isPdfSource = (s) => !s.location || s.location.type === 'page';

/** Opens the view (loading) for a new source; answers the number that its answer must still match. */
function opening(title, state) {
  const asked = ++pageShown;
  const view = $('page-view');
  if (view.hidden) pageOpener = document.activeElement;
  view.hidden = false;
  document.body.classList.add('page-open');
  $('page-view-close').focus({ preventScroll: true });
  view.dataset.state = 'loading';
  $('page-view-title').textContent = title;
  $('page-view-state').textContent = state;
  $('page-frame').replaceChildren();
  $('page-view-passage').replaceChildren();
  return asked;
}

function failed(asked, e) {
  if (asked !== pageShown) return;
  $('page-view').dataset.state = 'failed';
  $('page-view-state').textContent = e.message;
}

/**
 * Shows the source's page beside the chat: the page's image (GET …/pages/{page}) with a rectangle
 * over each of the quote's boxes (fractions of the page, origin top-left, so they scale with the
 * image), and the page's text around the quote with the quote marked. `data-state` says where it
 * is: loading, shown (the image has loaded) or failed.
 */
export async function showPage(s) {
  if (!isPdfSource(s)) return showPart(s);
  const asked = opening(`${s.fileName ?? 'PDF'}, page ${s.page}`, 'Loading the page…');
  const view = $('page-view');
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
    image.onerror = () => failed(asked, new Error('The page image could not be loaded.'));
    frame.replaceChildren(image, ...highlights);
    image.src = page.imageUrl;
    $('page-view-passage').replaceChildren(...passageOf(page.text, s));
    highlights[0]?.scrollIntoView({ block: 'center' });
  } catch (e) {
    failed(asked, e);
  }
}

/** A part of a document that is not a PDF: its text around the quote, the quote marked (no image). */
async function showPart(s) {
  const asked = opening(`${s.fileName ?? 'Document'}, ${placeOf(s)}`, 'Loading the passage…');
  try {
    const { data: part } = await call('GET', `/files/${encodeURIComponent(s.fileId)}/parts/${s.part}`);
    if (asked !== pageShown) return;
    $('page-view').dataset.state = 'shown';
    $('page-view-state').textContent = '';
    $('page-view-passage').replaceChildren(...passageOf(part.text, s));
  } catch (e) {
    failed(asked, e);
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

export function closePage() {
  pageShown++;
  if ($('page-view').hidden) return;
  $('page-view').hidden = true;
  document.body.classList.remove('page-open');
  $('page-frame').replaceChildren();
  if (pageOpener?.isConnected) pageOpener.focus();
  pageOpener = undefined;
}
