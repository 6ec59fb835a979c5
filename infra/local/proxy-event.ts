import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { BodyShape } from '#shared/http/envelope.ts';
import { createId } from '#shared/ids.ts';
import {
  DEFAULT_HTTP_MEMORY_MB,
  DEFAULT_HTTP_TIMEOUT_SECONDS,
  type httpRouteList,
  type HttpMethod,
} from '../routes.ts';

// The local gateway's routes and events (gateway.ts): the manifest's routes compiled to the
// patterns a request path is matched against, in API Gateway's precedence, and a matched request
// as the REST API (payload v1) proxy event its function receives.

/** The deployed stage is `api` with every resource under `/v1` (see docs/DECISIONS.md). */
const STAGE = 'api';

export interface CompiledRoute {
  name: string;
  entry: string;
  method: HttpMethod;
  path: string;
  shape: BodyShape;
  timeoutSeconds: number;
  memoryMb: number;
  pattern: RegExp;
  params: string[];
}

/**
 * API Gateway's precedence between routes matching the same path: at the first segment where
 * one has a literal and the other a path variable, the literal wins (/chat/search before
 * /chat/{chatId}), wherever each stands in the manifest.
 */
export function byPrecedence(a: { path: string }, b: { path: string }): number {
  const [x, y] = [a.path.split('/'), b.path.split('/')];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const [vx, vy] = [x[i]!.startsWith('{'), y[i]!.startsWith('{')];
    if (vx !== vy) return vx ? 1 : -1;
  }
  return 0;
}

export function compileRoutes(list: typeof httpRouteList): CompiledRoute[] {
  return list.map((r) => {
    const params: string[] = [];
    const source = r.path
      .split('/')
      .map((segment) => {
        const m = /^\{(\w+)\}$/.exec(segment);
        if (!m) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        params.push(m[1]!);
        return '([^/]+)';
      })
      .join('/');
    return {
      name: r.name,
      entry: r.entry,
      method: r.method,
      path: r.path,
      shape: r.shape,
      timeoutSeconds: r.timeoutSeconds ?? DEFAULT_HTTP_TIMEOUT_SECONDS,
      memoryMb: r.memoryMb ?? DEFAULT_HTTP_MEMORY_MB,
      pattern: new RegExp(`^${source}/?$`),
      params,
    };
  });
}

const own = <T>(o: Record<string, T>, key: string, value: T) =>
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });

export function toEvent(
  req: IncomingMessage,
  url: URL,
  route: CompiledRoute,
  match: RegExpExecArray,
  body: Buffer,
): APIGatewayProxyEvent {
  // Own properties only, as in the JSON event Lambda parses: a header or query key named
  // `__proto__` or `constructor` is data, not Object.prototype's.
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    const value = req.rawHeaders[i + 1]!;
    own(headers, name, value);
    own(multiValueHeaders, name, [...(Object.hasOwn(multiValueHeaders, name) ? multiValueHeaders[name]! : []), value]);
  }
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [k, v] of url.searchParams) {
    own(query, k, v);
    own(multiQuery, k, [...(Object.hasOwn(multiQuery, k) ? multiQuery[k]! : []), v]);
  }
  const pathParameters: Record<string, string> = {};
  route.params.forEach((name, i) => {
    const raw = match[i + 1]!;
    try {
      pathParameters[name] = decodeURIComponent(raw);
    } catch {
      pathParameters[name] = raw;
    }
  });
  const requestId = createId();
  const resourcePath = `/v1${route.path}`;
  return {
    resource: resourcePath,
    path: url.pathname.slice('/api'.length),
    httpMethod: req.method!,
    headers,
    multiValueHeaders,
    queryStringParameters: url.searchParams.size ? query : null,
    multiValueQueryStringParameters: url.searchParams.size ? multiQuery : null,
    pathParameters: route.params.length ? pathParameters : null,
    stageVariables: null,
    body: body.length ? body.toString('utf8') : null,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${req.httpVersion}`,
      httpMethod: req.method!,
      identity: {
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: req.headers['user-agent'] ?? null,
      } as never,
      path: url.pathname,
      stage: STAGE,
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: route.name,
      resourcePath,
    },
  };
}
