// The chats' names: the sidebar's list (the open one marked), the search over names and
// messages, and the open chat's title. A chat's button carries its id (`data-chat-id`); the
// entry (playground.js) opens the chat a button names.

import { $, call, el, session } from './api.js';

const kindOf = (type) => (type === 'file' ? 'file chat' : 'text chat');

export async function listChats() {
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
        el('span', { className: 'kind', textContent: kindOf(c.type) }),
      );
      button.dataset.chatId = c.id;
      if (c.id === session.current?.id) button.setAttribute('aria-current', 'true');
      return el('li', {}, button);
    }),
  );
}

export function showTitle(chatName) {
  session.current.chatName = chatName;
  $('chat-title').textContent = `${chatName} · ${kindOf(session.current.type)}`;
}

/** A chat created without a name was titled by its first exchange. */
export function titled(chatName) {
  if (!chatName || !session.current) return;
  showTitle(chatName);
  void listChats();
}

export async function search(q) {
  if (!q.trim()) return $('search-results').replaceChildren();
  const { data } = await call('GET', `/chat/search?q=${encodeURIComponent(q)}&limit=20`);
  $('search-results').replaceChildren(
    ...(data.length
      ? data.map((hit) => {
          const button = el(
            'button',
            { type: 'button' },
            el('b', { textContent: hit.chatName }),
            el('span', { className: 'snippet', textContent: hit.snippet }),
          );
          button.dataset.chatId = hit.chatId;
          return el('li', {}, button);
        })
      : [el('li', { className: 'empty', textContent: 'Nothing found.' })]),
  );
}
