import { DECLINED_CARD, type Json, now, randomId, type StandInState, SUCCEEDING_CARD } from './state.ts';
import type { WebhookSender } from './webhooks.ts';

// The stand-in's API routes, on the provider's wire protocol: payment intents (create, search,
// get, confirm, cancel) and refunds. Errors are thrown as the provider's `{ type, code, message }`
// with its status; every change emits the provider's events.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { type: string; code?: string; message: string; param?: string; payment_intent?: Json },
  ) {
    super(body.message);
  }
}

const invalid = (message: string, code?: string, param?: string) =>
  new ApiError(400, { type: 'invalid_request_error', message, ...(code && { code }), ...(param && { param }) });

/** `metadata[orderId]=x` → { metadata: { orderId: 'x' } }. */
export function formDecode(text: string): Json {
  const out: Json = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const nested = /^(\w+)\[(\w+)\]$/.exec(key);
    if (nested) out[nested[1]!] = { ...(out[nested[1]!] as Json | undefined), [nested[2]!]: value };
    else out[key] = value;
  }
  return out;
}

type Handler = (
  params: Json,
  match: RegExpExecArray,
  key: string | undefined,
  /** Called with the publishable key (a browser holding a client secret), not the secret key. */
  publishable: boolean,
) => [number, Json];

/** Method, path, handler, and whether a publishable key may call it (confirming, with the client secret). */
export type Route = [string, RegExp, Handler, boolean?];

export function paymentRoutes({ intents, charges }: StandInState, emit: WebhookSender['emit']): Route[] {
  function intentOf(id: string): Json {
    const intent = intents.get(id);
    if (!intent) {
      throw new ApiError(404, {
        type: 'invalid_request_error',
        code: 'resource_missing',
        param: 'intent',
        message: `No such payment_intent: '${id}'`,
      });
    }
    return intent;
  }

  function unexpectedState(intent: Json, action: string) {
    return new ApiError(400, {
      type: 'invalid_request_error',
      code: 'payment_intent_unexpected_state',
      message: `You cannot ${action} this PaymentIntent because it has a status of ${intent.status}.`,
      payment_intent: intent,
    });
  }

  return [
    [
      'POST',
      /^\/v1\/payment_intents$/,
      (params, _m, key) => {
        const amount = Number(params.amount);
        if (params.amount === undefined)
          throw invalid('Missing required param: amount.', 'parameter_missing', 'amount');
        if (!Number.isInteger(amount))
          throw invalid(`Invalid integer: ${params.amount}`, 'parameter_invalid_integer', 'amount');
        // The provider's answer to 0 (or less): not its minimum charge (amount_too_small), a bad integer.
        if (amount < 1)
          throw invalid('This value must be greater than or equal to 1.', 'parameter_invalid_integer', 'amount');
        if (typeof params.currency !== 'string' || !/^[a-z]{3}$/.test(params.currency))
          throw invalid('Missing required param: currency.', 'parameter_missing', 'currency');
        if (amount < 50) throw invalid(`Amount must be at least 50 cents`, 'amount_too_small', 'amount');
        if (amount > 99_999_999) throw invalid('Amount must be no more than 999,999.99', 'amount_too_large', 'amount');
        const id = randomId('pi');
        const intent: Json = {
          id,
          object: 'payment_intent',
          amount,
          amount_received: 0,
          currency: params.currency,
          client_secret: `${id}_secret_${randomId('x', 25).slice(2)}`,
          created: now(),
          latest_charge: null,
          last_payment_error: null,
          livemode: false,
          metadata: (params.metadata as Json | undefined) ?? {},
          payment_method: null,
          status: 'requires_payment_method',
        };
        intents.set(id, intent);
        emit('payment_intent.created', intent, { idempotencyKey: key });
        return [200, intent];
      },
    ],
    [
      'GET',
      /^\/v1\/payment_intents\/search$/,
      (params) => {
        // The search language's one query the tools need: metadata['key']:'value'.
        const query = /^metadata\['(\w+)'\]:'([^']*)'$/.exec(String(params.query ?? ''));
        if (!query) throw invalid('Invalid search query', 'parameter_invalid_string', 'query');
        const data = [...intents.values()].filter((i) => (i.metadata as Json)[query[1]!] === query[2]);
        return [
          200,
          { object: 'search_result', data, has_more: false, next_page: null, url: '/v1/payment_intents/search' },
        ];
      },
    ],
    ['GET', /^\/v1\/payment_intents\/(pi_\w+)$/, (_p, m) => [200, intentOf(m[1]!)]],
    [
      'POST',
      /^\/v1\/payment_intents\/(pi_\w+)\/confirm$/,
      (params, m, key, publishable) => {
        const intent = intentOf(m[1]!);
        // With the publishable key (a browser), the intent's client secret is the credential.
        if (publishable && params.client_secret !== intent.client_secret) {
          throw invalid(
            'The client_secret provided does not match the client_secret associated with the PaymentIntent.',
            'payment_intent_invalid_parameter',
            'client_secret',
          );
        }
        if (intent.status !== 'requires_payment_method' && intent.status !== 'requires_confirmation')
          throw unexpectedState(intent, 'confirm');
        const method = String(params.payment_method ?? '');
        if (method !== SUCCEEDING_CARD && method !== DECLINED_CARD)
          throw invalid(`No such PaymentMethod: '${method}'`, 'resource_missing', 'payment_method');
        intent.payment_method = method;
        if (method === DECLINED_CARD) {
          const error = {
            type: 'card_error',
            code: 'card_declined',
            decline_code: 'generic_decline',
            message: 'Your card was declined.',
          };
          Object.assign(intent, { status: 'requires_payment_method', last_payment_error: error });
          emit('payment_intent.payment_failed', intent, { idempotencyKey: key });
          throw new ApiError(402, { ...error, payment_intent: intent });
        }
        const charge: Json = {
          id: randomId('ch'),
          object: 'charge',
          amount: intent.amount,
          amount_refunded: 0,
          currency: intent.currency,
          paid: true,
          payment_intent: intent.id,
          refunded: false,
          status: 'succeeded',
        };
        charges.set(charge.id as string, charge);
        Object.assign(intent, {
          status: 'succeeded',
          amount_received: intent.amount,
          latest_charge: charge.id,
          last_payment_error: null,
        });
        emit('charge.succeeded', charge, { idempotencyKey: key });
        emit('payment_intent.succeeded', intent, { idempotencyKey: key });
        return [200, intent];
      },
      true,
    ],
    [
      'POST',
      /^\/v1\/payment_intents\/(pi_\w+)\/cancel$/,
      (_p, m, key) => {
        const intent = intentOf(m[1]!);
        if (intent.status === 'succeeded' || intent.status === 'canceled') throw unexpectedState(intent, 'cancel');
        Object.assign(intent, { status: 'canceled', canceled_at: now() });
        emit('payment_intent.canceled', intent, { idempotencyKey: key });
        return [200, intent];
      },
    ],
    [
      'POST',
      /^\/v1\/refunds$/,
      (params, _m, key) => {
        if (typeof params.payment_intent !== 'string')
          throw invalid('Missing required param: payment_intent.', 'parameter_missing', 'payment_intent');
        const intent = intentOf(params.payment_intent);
        const charge = charges.get(String(intent.latest_charge));
        if (!charge) {
          throw invalid(
            `This PaymentIntent (${intent.id}) does not have a successful charge to refund.`,
            'charge_not_refundable',
          );
        }
        if (charge.refunded) {
          throw invalid(`Charge ${charge.id} has already been refunded.`, 'charge_already_refunded');
        }
        Object.assign(charge, { refunded: true, amount_refunded: charge.amount });
        const refund = {
          id: randomId('re'),
          object: 'refund',
          amount: charge.amount,
          charge: charge.id,
          currency: charge.currency,
          payment_intent: intent.id,
          status: 'succeeded',
        };
        emit('charge.refunded', charge, { idempotencyKey: key });
        emit('refund.created', refund, { idempotencyKey: key });
        return [200, refund];
      },
    ],
  ];
}
