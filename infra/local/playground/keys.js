// API keys, made, listed and revoked with the person's own token (never shown again once made).

import { $, api, call, el, showError } from './api.js';

/** GET /me/api-keys: each key's name, scopes and last use, with a Revoke button (never the key itself). */
export async function listKeys() {
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
export async function createKey(name) {
  const { key } = (await call('POST', '/me/api-keys', { name: name.trim() || 'playground' })).data;
  $('new-key-value').textContent = key;
  $('new-key').hidden = false;
  $('key-name').value = '';
  await listKeys();
}

/** Forgets the key shown (on sign-out: a key is shown once, to the one who made it). */
export function forgetKey() {
  $('new-key').hidden = true;
  $('new-key-value').textContent = '';
}
