// The playground's webhooks panel: the person's endpoints (GET /me/webhooks), a new one (its
// secret shown once), a ping, a delete and one endpoint's delivery log, on the public API with
// the person's own token. playground.js wires it in.

import { $, call, el, showError } from './api.js';

/** @returns {{ list: () => Promise<void>, create: () => Promise<void>, reset: () => void }} */
export function webhooksPanel() {
  let shown; // the endpoint whose delivery log is open: { id, url }

  const fail = (e) => showError('webhooks-error', e.message);

  /** GET /me/webhooks/{id}/deliveries: event, status, attempts, last answer; newest first. */
  async function showDeliveries(hook) {
    shown = hook;
    const { data: deliveries } = await call('GET', `/me/webhooks/${hook.id}/deliveries?limit=20`);
    $('webhook-deliveries-title').textContent = `Deliveries to ${hook.url}`;
    $('webhook-deliveries').replaceChildren(
      ...deliveries.map((d) =>
        el('li', {
          className: 'delivery',
          textContent: [
            d.event,
            d.status,
            `${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`,
            d.lastStatusCode !== undefined ? `HTTP ${d.lastStatusCode}` : d.lastError,
            d.createdAt.slice(0, 19).replace('T', ' '),
          ]
            .filter(Boolean)
            .join(' · '),
        }),
      ),
    );
    if (!deliveries.length) $('webhook-deliveries').append(el('li', { textContent: 'No deliveries yet' }));
    $('webhook-log').hidden = false;
  }

  /** GET /me/webhooks: each endpoint's URL and events, with Ping, Deliveries and Delete (never its secret). */
  async function list() {
    const { data: hooks } = await call('GET', '/me/webhooks?limit=100');
    if (shown && !hooks.some((h) => h.id === shown.id)) reset(false);
    const button = (textContent, onclick, className = 'quiet') =>
      el('button', { type: 'button', className, textContent, onclick: () => onclick().catch(fail) });
    $('webhooks').replaceChildren(
      ...hooks.map((h) =>
        el(
          'li',
          { className: 'webhook' },
          el('span', { textContent: `${h.url} · ${h.events.join(', ')}` }),
          button('Ping', async () => {
            showError('webhooks-error', '');
            await call('POST', `/me/webhooks/${h.id}/test`);
            await showDeliveries(h);
          }),
          button('Deliveries', () => showDeliveries(h)),
          button(
            'Delete',
            async () => {
              await call('DELETE', `/me/webhooks/${h.id}`);
              await list();
            },
            'quiet danger',
          ),
        ),
      ),
    );
  }

  /** POST /me/webhooks: the URL and the checked events; the signing secret is shown this once. */
  async function create() {
    const events = [...document.querySelectorAll('#webhook-events input:checked')].map((i) => i.value);
    if (!events.length) throw new Error('Choose at least one event.');
    const { secret } = (await call('POST', '/me/webhooks', { url: $('webhook-url').value.trim(), events })).data;
    $('new-webhook-secret-value').textContent = secret;
    $('new-webhook-secret').hidden = false;
    $('webhook-url').value = '';
    await list();
  }

  /** Forgets what the panel showed (on sign-out: a secret is for the one who made it). */
  function reset(all = true) {
    shown = undefined;
    $('webhook-log').hidden = true;
    $('webhook-deliveries').replaceChildren();
    if (!all) return;
    $('new-webhook-secret').hidden = true;
    $('new-webhook-secret-value').textContent = '';
    $('webhooks').replaceChildren();
  }

  $('refresh-deliveries').onclick = () => shown && showDeliveries(shown).catch(fail);
  return { list, create, reset };
}
