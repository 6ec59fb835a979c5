import middy, { type MiddlewareObj } from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { createId } from '../ids.ts';
import { finished, Readable } from 'node:stream';
import * as z from '../zod.ts';
import { logger } from '../observability/logger.ts';
import { metrics } from '../observability/metrics.ts';
import { errorBody, successBody } from './envelope.ts';
import type { HttpRouteSettings } from './route.ts';
import { SSE_HEADERS, writeEvents, type EventStream } from './sse.ts';
import { contentDisposition } from './attachment.ts';
import {
  BadRequestError,
  httpErrorOf,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
  ValidationError,
  type FieldIssue,
} from './errors.ts';
import { asError } from '../errors.ts';
import type { AuthUser } from '../users/authenticate.ts';
import { authentication, layerOfThisFunction, type HttpLayer } from './authentication.ts';
import type { Event, RequestState } from './request-state.ts';

export type { HttpLayer };

// The HTTP layer every API function shares, on middy. In order: request id and logging,
// error mapping (the only place an error becomes a response), authentication (with the route's
// per-user rate limit), JSON body
// parsing with a size limit, and zod validation of body, path and query. Handlers receive
// typed input and return data; they never build a response or an error body. A route that declares
// its `success` (status and message) gets them from the route, so its handler returns the payload alone.

// Any zod schema: zod/mini (what the routes use) or classic zod.
export interface Schemas {
  body?: z.core.$ZodType;
  params?: z.core.$ZodType;
  query?: z.core.$ZodType;
}

type Infer<T> = T extends z.core.$ZodType ? z.infer<T> : undefined;

interface HttpRequest<S extends Schemas> {
  body: Infer<S['body']>;
  params: Infer<S['params']>;
  query: Infer<S['query']>;
  /** The signed-in caller (absent on the `idp` route, POST /auth, and on `public` routes). */
  user: AuthUser;
  /** Lower-cased request headers. */
  headers: Record<string, string | undefined>;
  requestId: string;
  event: APIGatewayProxyEvent;
  context: Context;
}

interface HttpResult {
  statusCode?: number;
  /** The payload: `data` of the envelope, or the bare body on order routes. */
  data?: unknown;
  message?: string;
  headers?: Record<string, string>;
  /** A streamed body (streaming routes only); its headers are fixed before the first byte. */
  stream?: Readable;
  /** A body of Server-Sent Events (streaming routes only), written by shared/http/sse.ts. */
  events?: EventStream;
  /** A file to download (streaming routes only): sent as it is produced, with its content-disposition. */
  attachment?: Attachment;
}

/** A file the client saves: its name (any characters), media type and text, produced piece by piece. */
export interface Attachment {
  fileName: string;
  contentType: string;
  body: AsyncIterable<string>;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const LONE_SURROGATE = /\p{Cs}/u;

function lowerCaseHeaders(event: APIGatewayProxyEvent): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(event.headers ?? {})) out[k.toLowerCase()] = v ?? undefined;
  return out;
}

function responseHeaders(
  layer: HttpLayer,
  state: RequestState | undefined,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'access-control-allow-origin': layer.corsAllowOrigin,
    'access-control-expose-headers': 'x-request-id, x-next-cursor, content-disposition',
    ...(state && { 'x-request-id': state.requestId }),
    ...extra,
  };
}

/** Request id, structured log context, the request's metrics (by `route`) and the final response (success or error). */
function respond(
  layer: HttpLayer,
  settings: HttpRouteSettings,
): MiddlewareObj<Event, APIGatewayProxyResult | { body: Readable }> {
  const { shape } = settings;
  // The metrics' `route` dimension: "GET /chat/{chatId}".
  const route = `${settings.method} ${settings.path}`;
  return {
    before: (request) => {
      const headers = lowerCaseHeaders(request.event);
      const fromClient = headers['x-request-id'];
      const requestId =
        fromClient && REQUEST_ID.test(fromClient)
          ? fromClient
          : (request.event.requestContext?.requestId ?? createId());
      request.event.state = { requestId, startedAt: Date.now(), headers, input: {} };
      logger.addContext(request.context); // function name, its request id, cold start: in every line
      logger.appendKeys({ requestId, path: request.event.path, method: request.event.httpMethod });
    },
    after: (request) => {
      let result = (request.response ?? {}) as HttpResult;
      const state = request.event.state;
      const statusCode = result.statusCode ?? 200;
      if (result.events) {
        const { body, finished } = writeEvents(result.events);
        state.tail = finished;
        result = { ...result, stream: body, headers: { ...SSE_HEADERS, ...result.headers } };
      }
      if (result.attachment) {
        // Only a streamed response can be larger than Lambda's 6 MB buffered payload.
        if (!settings.streaming) throw new Error(`${route}: an attachment needs a streaming route`);
        const { fileName, contentType, body } = result.attachment;
        result = {
          ...result,
          stream: Readable.from(body),
          headers: {
            'content-type': contentType,
            'content-disposition': contentDisposition(fileName),
            ...result.headers,
          },
        };
      }
      if (result.stream) {
        // A streamed response is complete when its body ends (or breaks off), not when the
        // handler returns it: its one log line is written then.
        finished(result.stream, (err) => {
          logger.info('request completed', {
            statusCode,
            ms: Date.now() - state.startedAt,
            streamed: true,
            ...(err && { streamError: err.message }),
          });
          logger.resetKeys();
          metrics.response(route, statusCode);
        });
        request.response = {
          statusCode,
          headers: responseHeaders(layer, state, result.headers),
          body: result.stream,
        } as never;
        return;
      }
      logger.info('request completed', { statusCode, ms: Date.now() - state.startedAt });
      logger.resetKeys();
      metrics.response(route, statusCode);
      request.response = {
        statusCode,
        headers: responseHeaders(layer, state, result.headers),
        body: statusCode === 204 ? '' : JSON.stringify(successBody(shape, statusCode, result.data, result.message)),
      };
    },
    onError: (request) => {
      const err = request.error;
      const state = request.event.state;
      const known = httpErrorOf(err);
      const statusCode = known?.statusCode ?? 500;
      const message = known?.message ?? 'Internal server error';
      const errors = known?.details.errors;
      const headers = known?.details.headers ?? {};
      // The reason goes under `reason`: `message` is the log line's own key (Powertools drops it).
      if (statusCode >= 500) logger.error('request failed', { statusCode, error: asError(err) });
      else
        logger.info('request rejected', {
          statusCode,
          reason: message,
          ...(known?.details.code && { code: known.details.code }),
          ...(errors && { errors }),
        });
      logger.resetKeys();
      metrics.response(route, statusCode);
      request.response = {
        statusCode,
        headers: responseHeaders(layer, state, headers),
        body: JSON.stringify(errorBody(shape, statusCode, message, errors, known?.details.code)),
      };
    },
  };
}

function jsonBody(enabled: boolean, limit: number): MiddlewareObj<Event> {
  return {
    before: (request) => {
      const { event } = request;
      if (!enabled) return; // routes without a body schema ignore any body
      const raw = event.body ?? '';
      if (raw === '') return;
      const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
      if (Buffer.byteLength(text, 'utf8') > limit) throw new PayloadTooLargeError(limit);
      const contentType = event.state.headers['content-type'];
      if (contentType !== undefined && !JSON_TYPE.test(contentType)) throw new UnsupportedMediaTypeError();
      let hasLoneSurrogate = false;
      try {
        // A lone surrogate (`"\ud800"`) is valid JSON but no valid text: UTF-8 stores (DynamoDB,
        // S3, the model's API) cannot hold it, so it is refused here, once, for every route.
        event.state.input.body = JSON.parse(text, (key, value) => {
          if (LONE_SURROGATE.test(key) || (typeof value === 'string' && LONE_SURROGATE.test(value)))
            hasLoneSurrogate = true;
          return value;
        });
      } catch {
        throw new BadRequestError(
          'Malformed JSON body',
          [{ path: 'body', message: 'Body is not valid JSON' }],
          'MALFORMED_JSON',
        );
      }
      if (hasLoneSurrogate) {
        throw new BadRequestError(
          'Malformed JSON body',
          [{ path: 'body', message: 'Body holds ill-formed Unicode (a lone surrogate)' }],
          'MALFORMED_JSON',
        );
      }
    },
  };
}

function issuesOf(location: string, error: z.core.$ZodError): FieldIssue[] {
  return error.issues.map((i) => ({
    path: [location, ...i.path.map(String)].join('.'),
    message: i.message,
    code: i.code,
  }));
}

function validation(schemas: Schemas): MiddlewareObj<Event> {
  return {
    before: (request) => {
      const { event } = request;
      const sources = {
        // An absent body validates as {}, so "field required" errors name the missing fields.
        body: 'body' in event.state.input ? event.state.input.body : {}, // JSON `null` is not an absent body
        params: event.pathParameters ?? {},
        query: event.queryStringParameters ?? {},
      };
      const issues: FieldIssue[] = [];
      for (const location of ['params', 'query', 'body'] as const) {
        const schema = schemas[location];
        if (!schema) continue;
        const parsed = z.safeParse(schema, sources[location]);
        if (parsed.success) event.state.input[location] = parsed.data;
        else issues.push(...issuesOf(location, parsed.error));
      }
      if (issues.length) throw new ValidationError(issues);
    },
  };
}

/** What a route's handler returns: the payload alone where the route declares its success, else the whole result. */
type HandlerResult<R extends HttpRouteSettings> = R extends { success: object } ? unknown : HttpResult;

/**
 * Builds the Lambda handler of one route of the manifest. Streaming routes are wrapped with
 * Lambda response streaming (middy 7's `executionModeStreamifyResponse`: the old
 * `streamifyResponse: true` option is silently ignored); their handler may return `stream`.
 */
export function httpHandler<R extends HttpRouteSettings, S extends Schemas>(
  route: R,
  schemas: S,
  fn: (request: HttpRequest<S>) => Promise<HandlerResult<R>>,
  // A bad setting fails the cold start, not the first request.
  layer: HttpLayer = layerOfThisFunction(),
) {
  return (
    middy<Event, APIGatewayProxyResult>({
      ...(route.streaming === true && { executionMode: executionModeStreamifyResponse }),
      timeoutEarlyInMillis: 0,
      // Runs once a streamed body is sent (or broke off): the invocation lasts until the stream's
      // last work is done, so a client that left still gets its partial reply stored before Lambda
      // may freeze the instance.
      requestEnd: async (request) => {
        await (request.event as Event | undefined)?.state?.tail;
      },
    })
      // Outermost: request id, logging, metrics and the one place a response is made.
      .use(respond(layer, route) as MiddlewareObj<Event, APIGatewayProxyResult>)
      .use(authentication(route, layer))
      .use(jsonBody(schemas.body !== undefined, layer.maxBodyBytes))
      .use(validation(schemas))
      .handler(async (event, context) => {
        const { state } = event;
        const result = await fn({
          body: state.input.body as never,
          params: state.input.params as never,
          query: state.input.query as never,
          user: state.user as AuthUser,
          headers: state.headers,
          requestId: state.requestId,
          event,
          context,
        });
        const { success } = route;
        return (success ? { statusCode: success.status, message: success.message, data: result } : result) as never;
      })
  );
}
