import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { AuthUser } from '../users/authenticate.ts';

// What the HTTP layer's middlewares keep about one request (on the event, as `state`).

export interface RequestState {
  requestId: string;
  startedAt: number;
  headers: Record<string, string | undefined>;
  user?: AuthUser;
  /** A read's caller check, running while the handler does (see `authentication`). */
  confirming?: Promise<unknown>;
  input: { body?: unknown; params?: unknown; query?: unknown };
  /** A streamed body's last work (storing a partial reply): the invocation ends after it. */
  tail?: Promise<void>;
}

export type Event = APIGatewayProxyEvent & { state: RequestState };
