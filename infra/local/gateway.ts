import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createId } from '@paralleldrive/cuid2';
import { errorBody, type BodyShape } from '../../shared/http/envelope.ts';
import { httpRouteList, type HttpMethod } from '../routes.ts';
import {
  HTTP_INTEGRATION_CONTENT_TYPE,
  PRELUDE_DELIMITER,
  isStreamingHandler,
  lambdaContext,
  type ResponseStream,
} from './lambda-runtime.ts';

// The local API Gateway: turns each HTTP request under /api/v1 into a REST API (payload v1)
// proxy event, calls the manifest's handler and writes its answer, streaming handlers
// included (bytes reach the socket as the handler writes them).

/** API Gateway's own limit on a request payload. */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;
export const API_PREFIX = '/api/v1';
/** The deployed stage is `api` with every resource under `/v1` (see docs/DECISIONS.md). */
const STAGE = 'api';

export type LoadHandler = (entry: string) => Promise<unknown>;

export interface GatewayOptions {
  port: number;
  host?: string;
  loadHandler: LoadHandler;
  corsAllowOrigin?: string;
  /** One line per request; false silences it. */
  log?: ((line: string) => void) | false;
  /** The routes to serve; the manifest's by default. */
  routes?: typeof httpRouteList;
  /** Asked first: answers the local pages (playground, /docs, infra/local/dev-pages.ts); true when it did. */
  pages?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
  /** Extra non-API routes (the local identity provider's JWKS). */
  extraRoutes?: Record<string, (req: IncomingMessage, res: ServerResponse) => void>;
}

interface CompiledRoute {
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

function compile(list: typeof httpRouteList): CompiledRoute[] {
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
      timeoutSeconds: r.timeoutSeconds ?? 29,
      memoryMb: r.memoryMb ?? 1024,
      pattern: new RegExp(`^${source}/?$`),
      params,
    };
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  if (res.headersSent) return res.end();
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const own = <T>(o: Record<string, T>, key: string, value: T) =>
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });

function toEvent(req: IncomingMessage, url: URL, route: CompiledRoute, match: RegExpExecArray, body: Buffer): APIGatewayProxyEvent {
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
      identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: req.headers['user-agent'] ?? null } as never,
      path: url.pathname,
      stage: STAGE,
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: route.name,
      resourcePath,
    },
  };
}

/** A Lambda response stream writing to the HTTP response, parsing the runtime's prelude first. */
function responseStreamFor(res: ServerResponse): ResponseStream {
  let contentType = 'application/octet-stream';
  let pending: Buffer | undefined = Buffer.alloc(0); // bytes before the prelude delimiter
  const stream = new Writable({
    write(chunk: Buffer, _enc, callback) {
      let bytes: Buffer = Buffer.from(chunk);
      if (pending !== undefined) {
        if (contentType !== HTTP_INTEGRATION_CONTENT_TYPE) {
          pending = undefined;
          res.writeHead(200, { 'content-type': contentType });
        } else {
          const all: Buffer = Buffer.concat([pending, bytes]);
          const at = all.indexOf(PRELUDE_DELIMITER);
          if (at < 0) {
            pending = all;
            return callback();
          }
          const prelude = JSON.parse(all.subarray(0, at).toString('utf8')) as {
            statusCode?: number;
            headers?: Record<string, string>;
          };
          res.writeHead(prelude.statusCode ?? 200, prelude.headers ?? {});
          res.flushHeaders();
          pending = undefined;
          bytes = all.subarray(at + PRELUDE_DELIMITER.length);
        }
      }
      if (!bytes.length) return callback();
      if (res.write(bytes)) callback();
      else res.once('drain', () => callback());
    },
    final(callback) {
      if (!res.headersSent) res.writeHead(200, { 'content-type': contentType });
      res.end(callback);
    },
  }) as ResponseStream;
  stream.setContentType = (type: string) => {
    contentType = type;
  };
  return stream;
}

function timeout(ms: number): { promise: Promise<never>; clear: () => void } {
  let timer: NodeJS.Timeout;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('Function timed out'), { name: 'FunctionTimeout' })), ms);
  });
  return { promise, clear: () => clearTimeout(timer) };
}

export interface Gateway {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const routes = compile(options.routes ?? httpRouteList);
  const log = options.log === false ? undefined : (options.log ?? ((line: string) => console.log(line)));
  const corsOrigin = options.corsAllowOrigin ?? '*';

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<number> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (await options.pages?.(req, res)) return res.statusCode;
    const extra = options.extraRoutes?.[url.pathname];
    if (extra) {
      extra(req, res);
      return res.statusCode;
    }
    if (url.pathname !== API_PREFIX && !url.pathname.startsWith(`${API_PREFIX}/`)) {
      send(res, 404, errorBody('envelope', 404, `Not found: ${url.pathname} (the API is under ${API_PREFIX})`));
      return 404;
    }
    const path = url.pathname.slice(API_PREFIX.length) || '/';
    const candidates = routes
      .map((route) => ({ route, match: route.pattern.exec(path) }))
      .filter((c): c is { route: CompiledRoute; match: RegExpExecArray } => c.match !== null);
    if (!candidates.length) {
      send(res, 404, errorBody('envelope', 404, `No route for ${req.method} ${url.pathname}`));
      return 404;
    }
    const allowed = [...new Set(candidates.map((c) => c.route.method))];
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-origin': corsOrigin,
        'access-control-allow-methods': [...allowed, 'OPTIONS'].join(', '),
        'access-control-allow-headers': 'authorization, content-type, x-request-id',
        'access-control-max-age': '600',
      });
      res.end();
      return 204;
    }
    const hit = candidates.find((c) => c.route.method === req.method);
    if (!hit) {
      const shape = candidates[0]!.route.shape;
      send(res, 405, errorBody(shape, 405, `Method ${req.method} not allowed on ${url.pathname}`), {
        allow: allowed.join(', '),
      });
      return 405;
    }
    const { route, match } = hit;
    const body = await readBody(req);
    if (body === 'too-large') {
      send(res, 413, errorBody(route.shape, 413, 'Request payload exceeds the 10 MB API Gateway limit'));
      return 413;
    }
    const event = toEvent(req, url, route, match, body);
    const handler = await options.loadHandler(route.entry);
    const context = lambdaContext(route.name, route.timeoutSeconds * 1000, route.memoryMb);
    const limit = timeout(route.timeoutSeconds * 1000);
    try {
      if (isStreamingHandler(handler)) {
        const stream = responseStreamFor(res);
        // A client that goes away ends the stream; the handler sees its pipeline fail and stops.
        res.on('close', () => {
          if (!res.writableFinished) stream.destroy(new Error('client disconnected'));
        });
        await Promise.race([handler(event, stream, context), limit.promise]);
        // Wait for the last bytes, unless the stream already finished or broke off.
        if (!res.writableEnded && !stream.writableFinished && !stream.destroyed) {
          await new Promise((resolve) => stream.once('finish', resolve).once('close', resolve));
        }
        return res.statusCode;
      }
      const result = (await Promise.race([
        (handler as (e: unknown, c: unknown) => Promise<APIGatewayProxyResult>)(event, context),
        limit.promise,
      ])) as APIGatewayProxyResult;
      const headers: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
      for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.map(String);
      res.writeHead(result.statusCode, headers);
      res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
      return result.statusCode;
    } catch (err) {
      const timedOut = (err as Error).name === 'FunctionTimeout';
      if (!res.headersSent) {
        // What API Gateway answers when the integration fails or times out.
        const status = timedOut ? 504 : 502;
        send(res, status, errorBody(route.shape, status, timedOut ? 'Endpoint request timed out' : 'Internal server error'));
        if (!timedOut) console.error(`[${route.name}] handler failed:`, err);
        return status;
      }
      res.destroy();
      return res.statusCode;
    } finally {
      limit.clear();
    }
  }

  const server = http.createServer((req, res) => {
    const started = process.hrtime.bigint();
    handle(req, res)
      .catch((err) => {
        console.error('gateway error:', err);
        send(res, 502, errorBody('envelope', 502, 'Internal server error'));
        return 502;
      })
      .then((status) => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        log?.(`${req.method} ${req.url} ${status} ${ms.toFixed(1)}ms`);
      });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // A deep accept queue: a burst of connections (a load run) beyond Node's default 511 would
    // otherwise be reset by the kernel after its SYN-ACK retries (~15 s), not served.
    server.listen({ port: options.port, host: options.host ?? '127.0.0.1', backlog: 4096 }, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://localhost:${port}${API_PREFIX}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
