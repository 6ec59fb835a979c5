// The playground's ground floor: the session, the DOM helpers and the calls to the public API
// (the same calls any client makes). Every view imports these; this module imports nothing.

export const api = '/api/v1';
export const $ = (id) => document.getElementById(id);
export const POLL_MS = 1000;

/**
 * What the views share: the service token, the open chat ({ id, chatName, type, files }), whether
 * a prompt waits for its reply, and the reply being streamed ({ chatId, messageId }).
 */
export const session = {
  token: sessionStorage.getItem('serviceToken') ?? undefined,
  current: undefined,
  sending: false,
  streaming: undefined,
};

let signedOut = () => {};
/** What a 401 does (the entry signs out): set once, by playground.js. */
export function onUnauthorized(fn) {
  signedOut = fn;
}

export function el(tag, props = {}, ...children) {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children.filter((c) => c !== undefined && c !== null && c !== false));
  return e;
}

/** Shows (or clears) the error beside the control that caused it. */
export function showError(id, message) {
  $(id).textContent = message ?? '';
}

/**
 * The error of an answer that is not ok: the envelope's message. A 401 means the stored token is
 * no longer accepted: the page signs out, saying why.
 */
export async function answerError(res) {
  const json = await res.json().catch(() => ({}));
  if (res.status === 401) signedOut('Your session has ended: sign in again.');
  return new Error(json.message ?? `HTTP ${res.status}`);
}

const request = (method, path, body, headers = {}) =>
  fetch(api + path, {
    method,
    headers: {
      authorization: `Bearer ${session.token}`,
      ...(body && { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body && { body: JSON.stringify(body) }),
  });

/** One API call; answers the envelope's data, throws the envelope's message. */
export async function call(method, path, body) {
  const res = await request(method, path, body);
  if (!res.ok) throw await answerError(res);
  const json = await res.json().catch(() => ({}));
  return { data: json.data, headers: res.headers };
}

/** An order route's call: bare bodies, `{ message }` errors. */
export async function bare(method, path, body) {
  const res = await request(method, path, body);
  if (!res.ok) throw await answerError(res);
  return res.json();
}

/** A call answered as it is read (text/event-stream, a file): the response itself, unchecked. */
export const raw = (method, path, body, headers = {}) => request(method, path, body, headers);

export const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A form's submit: its own error line cleared first, then filled with what went wrong. */
export const guard = (errorId, fn) => (event) => {
  event.preventDefault();
  showError(errorId, '');
  fn().catch((e) => showError(errorId, e.message));
};
