import type { RateLimitName } from '../limits/user-limits.ts';
import type { BodyShape } from './envelope.ts';
import type { ApiKeyScope } from '../auth/api-key-scopes.ts';

// What the HTTP layer needs to know of a route: what the route is. Each domain defines its own
// (shared/<domain>/routes.ts) and each function passes its own route in; the deployment
// (infra/deployment/) adds what the function gets (timeout, memory, access) by the same name.

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A route's answer when it succeeds, where that does not depend on the request. */
export interface RouteSuccess {
  status: 200 | 201 | 202 | 204;
  /** The envelope's message (envelope routes; absent: the status's default, shared/http/envelope.ts). */
  message?: string;
}

/**
 * `idp`: an identity-provider ID token (POST /auth only); `user`: any signed-in caller; `admin`: role admin;
 * `public`: no caller at all (a shared chat): its `rateLimit` counts per source IP instead of per user.
 */
export type AuthMode = 'idp' | 'user' | 'admin' | 'public';

export interface HttpRouteSettings {
  method: HttpMethod;
  /** Relative to the base URL (which ends in /api/v1); `{param}` marks a path parameter. */
  path: string;
  auth: AuthMode;
  shape: BodyShape;
  /** Served through Lambda response streaming (REST API integration in STREAM mode). */
  streaming?: boolean;
  /** Requests per minute per user (per source IP on `public` routes) are limited (the setting of this name, shared/limits/). */
  rateLimit?: RateLimitName;
  /** The scope an API key needs here (shared/auth/api-key-scopes.ts); absent: keys are refused (403). */
  keyScope?: ApiKeyScope;
  /**
   * Declared where every success is the same: the handler then returns only the payload. Without
   * it the handler returns the whole result (status, message, headers, stream: a page, a reply
   * that may stream, a sign-in that may create). Its OpenAPI contract documents this status alone.
   */
  success?: RouteSuccess;
}

/** A domain's routes, by function name (the entry is functions/<name>.ts). */
export type RouteDefinitions = Record<string, HttpRouteSettings>;
