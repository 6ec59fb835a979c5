// A reply as it is written: sent whole or streamed (text/event-stream read through fetch), and
// followed by its id after a dropped connection or a reload (Last-Event-ID) to its end; Stop ends
// it on the server.

import { $, answerError, call, el, pause, raw, session, showError } from './api.js';
import { titled } from './chat-list.js';
import { renderReply, replyItem } from './sources.js';

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

/**
 * Follows a reply by its id from the event after `state.lastId` to its end, resuming after a
 * dropped connection (Last-Event-ID) a few times, a little later each time.
 */
export async function followStream(li, chatId, state) {
  const messageId = li.dataset.messageId;
  showStop({ chatId, messageId });
  try {
    for (let attempt = 0; attempt < 6; attempt++) {
      if (attempt > 0) await pause(300 * 2 ** attempt);
      try {
        const res = await raw('GET', `/chat/${chatId}/messages/${messageId}/stream`, undefined, {
          accept: 'text/event-stream',
          'last-event-id': String(state.lastId),
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
  session.streaming = reply;
  $('stop').hidden = false;
  $('stop').disabled = false;
}

function hideStop(messageId) {
  if (session.streaming && session.streaming.messageId !== messageId) return;
  session.streaming = undefined;
  $('stop').hidden = true;
}

/** Stop: the reply ends where it is, on the server (every stream of it ends with `stopped`). */
export function stopReply() {
  const { streaming } = session;
  if (!streaming) return;
  $('stop').disabled = true;
  showError('prompt-error', '');
  call('POST', `/chat/${streaming.chatId}/messages/${streaming.messageId}/stop`).catch((e) =>
    showError('prompt-error', e.message),
  );
}

/**
 * A prompt and its reply, whole or streamed into the page: a new prompt (under `parentId` when
 * given: an edit), or, with `regenerate`, a new reply to the prompt of that ai message.
 */
export async function send(prompt, stream, { parentId, regenerate } = {}) {
  $('no-messages').hidden = true;
  if (prompt !== undefined)
    $('messages').append(el('li', { className: 'user' }, el('span', { className: 'text', textContent: prompt })));
  const reply = replyItem('');
  $('messages').append(reply);
  const text = reply.querySelector('.text');
  const chatId = session.current.id;
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
      const res = await raw('POST', path, { ...body, stream: true }, { accept: 'text/event-stream' });
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
