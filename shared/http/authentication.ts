import '../config/auth.ts';
import type { MiddlewareObj } from '@middy/core';
import { systemClock, type Clock } from '../clock.ts';
import { config, type Config } from '../config.ts';
import { CallerAuthenticator } from '../users/authenticate.ts';
import { serviceTokenSettings, ServiceTokens } from '../auth/service-token.ts';
import { ApiKeyVerifier } from '../auth/api-keys.ts';
import { ApiKeyRepository } from '../auth/api-key-repository.ts';
import { dynamo } from '../clients.ts';
import { UserRepository } from '../users/user-repository.ts';
import { userLimits, type UserLimits } from '../limits/user-limits.ts';
import { asError } from '../errors.ts';
import type { HttpRouteSettings } from './route.ts';
import type { Event } from './request-state.ts';

// Who may call a route: the HTTP layer's caller checks and per-user limits, composed once per
// function, and the middleware that applies them (shared/http/handler.ts puts it in its chain).

/** What the HTTP layer itself works with, composed once per function (httpLayer). */
export interface HttpLayer {
  maxBodyBytes: number;
  corsAllowOrigin: string;
  /** Checks the caller of every signed-in route; a layer without it serves `idp` and `public` routes only. */
  callers?: CallerAuthenticator;
  /** The per-user rate limits of the routes that have one. */
  limits?: Pick<UserLimits, 'takeRequest'>;
}

/** The HTTP layer of a function: its settings, caller checks and per-user limits, from the configuration. */
export function httpLayer(settings: Config, clock: Clock): HttpLayer {
  return {
    maxBodyBytes: settings.MAX_BODY_BYTES,
    corsAllowOrigin: settings.CORS_ALLOW_ORIGIN,
    callers: new CallerAuthenticator(
      new ServiceTokens(serviceTokenSettings(settings), clock),
      new UserRepository(dynamo(), settings.TABLE_NAME),
      settings.ADMIN_EMAILS,
      new ApiKeyVerifier(new ApiKeyRepository(dynamo(), settings.TABLE_NAME), clock),
    ),
    limits: userLimits(dynamo(), settings, clock),
  };
}

let functionLayer: HttpLayer | undefined;
/** The one HTTP layer of this function's instance, composed at its cold start (the first httpHandler call). */
export const layerOfThisFunction = () => (functionLayer ??= httpLayer(config(), systemClock));

/**
 * The caller of every signed-in route (all but POST /auth and the `public` ones): a valid service
 * JWT whose user still exists with the token's role, or an API key of a user that still exists,
 * holding the route's `keyScope`. Writes confirm the user before the handler
 * runs. Reads (GET, which change nothing) confirm it while the handler runs and answer only once
 * it is confirmed: the same check, one DynamoDB round trip less on the critical path.
 */
export function authentication(route: HttpRouteSettings, layer: HttpLayer): MiddlewareObj<Event> {
  const mode = route.auth;
  const { callers, limits } = layer;
  const anonymous = mode === 'idp' || mode === 'public';
  if (!anonymous && !callers) throw new Error(`${route.method} ${route.path}: its HTTP layer has no caller checks`);
  if (route.rateLimit && !limits) throw new Error(`${route.method} ${route.path}: its HTTP layer has no rate limits`);
  // A rate-limited read (following a reply, a PDF page) counts its request alongside the confirmation, as a write does.
  const concurrentRead = route.method === 'GET' && mode === 'user' && !route.rateLimit;
  return {
    before: async (request) => {
      if (mode === 'idp') return; // POST /auth verifies the provider's ID token itself
      const { state } = request.event;
      if (mode === 'public') {
        // No caller to count against: the limit is per source IP (API Gateway's, not a header).
        const ip = request.event.requestContext?.identity?.sourceIp ?? 'unknown';
        if (route.rateLimit) await limits!.takeRequest(`IP#${ip}`, route.rateLimit);
        return;
      }
      const claims = await callers!.verify(state.headers);
      callers!.checkScope(claims, route.keyScope); // an API key within its scopes (docs/DECISIONS.md "API keys")
      // An admin token's role is only known once the user is read (the configuration may have
      // withdrawn it), so an admin's read waits for the confirmation; a user's never needs to.
      if (!concurrentRead || claims.role !== 'user') {
        if (!route.rateLimit) {
          state.user = await callers!.confirm(claims, mode);
          return;
        }
        // The per-user rate limit is counted while the caller is confirmed (one round trip of
        // overhead, not two); a refused caller outranks the limit.
        const [confirmed, counted] = await Promise.allSettled([
          callers!.confirm(claims, mode),
          limits!.takeRequest(claims.userId, route.rateLimit),
        ]);
        if (confirmed.status === 'rejected') throw confirmed.reason;
        if (counted.status === 'rejected') throw counted.reason;
        state.user = confirmed.value;
        return;
      }
      state.user = { id: claims.userId, role: claims.role, ...(claims.apiKey && { apiKey: claims.apiKey }) };
      state.confirming = callers!.confirm(claims, mode);
      state.confirming.catch(() => undefined); // awaited in after/onError; never unhandled
    },
    after: async (request) => {
      await request.event.state.confirming;
    },
    onError: async (request) => {
      // A refused caller outranks whatever the handler failed with (e.g. a 404 of its read).
      await request.event.state?.confirming?.catch((err: unknown) => {
        request.error = asError(err);
      });
    },
  };
}

/** JSON bodies only, within MAX_BODY_BYTES; malformed JSON is a 400, not a 500. */
