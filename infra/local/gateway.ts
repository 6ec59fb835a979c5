import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { errorBody } from '#shared/http/envelope.ts';
import {
  corsPreflight,
  gatewayMethodBody,
  gatewayMethods,
  renderGatewayResponse,
  type GatewayResponseType,
} from '../gateway-responses.ts';
import { httpRouteList } from '../routes.ts';
import { byPrecedence, compileRoutes, type CompiledRoute, toEvent } from './proxy-event.ts';
import { responseStreamReader, type StreamSink } from './lambda-runtime.ts';
import { FunctionFailure, inProcessInvoker, type Invoker } from './invoker.ts';
import { requestGuard } from './request-guard.ts';

// The local API Gateway: turns each HTTP request under /api/v1 into a REST API (payload v1)
// proxy event (proxy-event.ts), invokes the manifest's function and writes its answer as API Gateway would:
// streaming functions' bytes reach the socket as the function writes them, and what API
// Gateway answers on its own (no such route, a function that failed or timed out, a payload
// too large) is the deployed stack's gateway response (infra/gateway-responses.ts).

/** API Gateway's own limit on a request payload. */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;
export const API_PREFIX = '/api/v1';

type LoadHandler = (entry: string) => Promise<unknown>;

interface GatewayOptions {
  port: number;
  host?: string;
  /** Runs the functions (the runtime's isolated instances); or handlers of this process from loadHandler. */
  invoker?: Invoker;
  loadHandler?: LoadHandler;
  corsAllowOrigin?: string;
  /** One line per request; false silences it. */
  log?: ((line: string) => void) | false;
  /** The routes to serve; the manifest's by default. */
  routes?: typeof httpRouteList;
  /**
   * Asked first: answers the local pages (playground, /docs, infra/local/dev-pages.ts); true when
   * it did. `origin` is the one the request was addressed to (its Host, already checked).
   */
  pages?: (req: IncomingMessage, res: ServerResponse, origin: string) => Promise<boolean>;
  /** Host names served besides the loopback ones (request-guard.ts). */
  extraHostNames?: readonly string[];
  /** Paths only pages of the gateway's own origin may use (the local sign-in). */
  sameOriginPaths?: readonly string[];
  /** Extra non-API routes (the local identity provider's JWKS). */
  extraRoutes?: Record<string, (req: IncomingMessage, res: ServerResponse) => void>;
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

export interface Gateway {
  url: string;
  port: number;
  /**
   * Stops taking requests. Those in flight get up to `graceMs` to finish (a drain) before every
   * connection is cut; 0 cuts them at once.
   */
  close(graceMs?: number): Promise<void>;
}

/** The sink a streaming function writes to: parses the prelude, then forwards the body as it comes. */
function httpSink(res: ServerResponse): StreamSink & { readonly started: boolean } {
  const reader = responseStreamReader(
    (head) => {
      const headers: Record<string, string | string[]> = { ...head.headers };
      if (head.cookies.length) headers['set-cookie'] = head.cookies;
      res.writeHead(head.statusCode, headers);
      res.flushHeaders();
    },
    (bytes) =>
      new Promise<void>((resolve) => {
        if (res.destroyed || res.write(bytes)) resolve();
        else res.once('drain', resolve).once('close', resolve);
      }),
  );
  return {
    get started() {
      return reader.started;
    },
    contentType: (type) => reader.contentType(type),
    async write(chunk) {
      if (res.destroyed) return false; // the client went away: the function's stream fails
      await reader.write(chunk);
      return !res.destroyed;
    },
    async end() {
      if (!reader.started) await reader.write(Buffer.alloc(0)); // a bodiless stream still has its head
      if (res.destroyed) return;
      await new Promise<void>((resolve) => {
        res.once('close', resolve);
        res.end(resolve);
      });
    },
  };
}

/** A buffered function result as API Gateway checks it: anything else is a malformed proxy response (502). */
function isProxyResult(value: unknown): value is APIGatewayProxyResult {
  const r = value as APIGatewayProxyResult | undefined;
  return (
    typeof r === 'object' &&
    r !== null &&
    Number.isInteger(r.statusCode) &&
    (r.body === undefined || typeof r.body === 'string')
  );
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const routes = compileRoutes(options.routes ?? httpRouteList);
  const log = options.log === false ? undefined : (options.log ?? ((line: string) => console.log(line)));
  const corsOrigin = options.corsAllowOrigin ?? '*';
  if (!options.invoker && !options.loadHandler) throw new Error('startGateway needs an invoker or a loadHandler');
  const invoker = options.invoker ?? inProcessInvoker(options.loadHandler!);

  /** One of API Gateway's own answers (the stack's gateway responses), with its CORS header. */
  function gatewayResponse(res: ServerResponse, type: GatewayResponseType, status: number, ownMessage: string): number {
    const { statusCode, body } = renderGatewayResponse(type, status, ownMessage);
    if (res.headersSent) {
      res.destroy();
      return res.statusCode;
    }
    res.writeHead(statusCode, { 'content-type': 'application/json', 'access-control-allow-origin': corsOrigin });
    res.end(body);
    return statusCode;
  }

  function preflight(res: ServerResponse): number {
    res.writeHead(204, {
      'access-control-allow-origin': corsOrigin,
      ...(corsOrigin !== '*' && { vary: 'Origin' }),
      'access-control-allow-methods': corsPreflight.allowMethods.join(','),
      'access-control-allow-headers': corsPreflight.allowHeaders.join(','),
      'access-control-expose-headers': corsPreflight.exposeHeaders.join(','),
      'access-control-max-age': String(corsPreflight.maxAgeSeconds),
    });
    res.end();
    return 204;
  }

  /** Whether a path is one of the API's resources (a route's path or a parent of one), which all answer OPTIONS. */
  const isResource = (path: string) => {
    const parts = path.split('/').filter(Boolean);
    return routes.some((r) => {
      const own = r.path.split('/').filter(Boolean);
      return parts.length <= own.length && parts.every((p, i) => own[i]!.startsWith('{') || own[i] === p);
    });
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<number> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    // Before anything else, pages included: a foreign Host (DNS rebinding) or a cross-site post.
    const refused = guard.refusal(req, url.pathname);
    if (refused) {
      req.resume();
      send(res, refused.status, errorBody('envelope', refused.status, refused.message));
      return refused.status;
    }
    if (await options.pages?.(req, res, guard.ownOrigin(req)!)) return res.statusCode;
    const extra = options.extraRoutes?.[url.pathname];
    if (extra) {
      extra(req, res);
      return res.statusCode;
    }
    if (url.pathname !== API_PREFIX && !url.pathname.startsWith(`${API_PREFIX}/`)) {
      // Outside the stage: nothing of the deployed API lives here.
      send(res, 404, errorBody('envelope', 404, `Not found: ${url.pathname} (the API is under ${API_PREFIX})`));
      return 404;
    }
    const path = url.pathname.slice(API_PREFIX.length) || '/';
    if (req.method === 'OPTIONS' && isResource(path)) return preflight(res);
    const own = gatewayMethods.find((m) => m.method === req.method && m.path === path);
    if (own && routes.some((r) => r.path === own.path)) {
      req.resume();
      res.writeHead(own.statusCode, {
        'content-type': 'application/json',
        allow: own.allow,
        'access-control-allow-origin': corsOrigin,
      });
      res.end(gatewayMethodBody(own));
      return own.statusCode;
    }
    const hit = routes
      .filter((route) => route.method === req.method)
      .map((route) => ({ route, match: route.pattern.exec(path) }))
      .filter((c): c is { route: CompiledRoute; match: RegExpExecArray } => c.match !== null)
      .sort((a, b) => byPrecedence(a.route, b.route))[0];
    // An unknown path, or a known one with a method it does not have: API Gateway's "missing
    // authentication token" (403 by default), which the stack answers as a 404.
    if (!hit) return gatewayResponse(res, 'MISSING_AUTHENTICATION_TOKEN', 403, 'Missing Authentication Token');
    const { route, match } = hit;
    const body = await readBody(req);
    if (body === 'too-large') return gatewayResponse(res, 'REQUEST_TOO_LARGE', 413, 'Request Too Long');
    const event = toEvent(req, url, route, match, body);
    // A client that goes away mid-stream: the function's next write fails, and it stops.
    const sink = httpSink(res);
    const fn = { name: route.name, entry: route.entry, timeoutSeconds: route.timeoutSeconds, memoryMb: route.memoryMb };
    let result: unknown;
    try {
      result = await invoker.invoke(fn, event, sink);
    } catch (err) {
      const failure = err instanceof FunctionFailure ? err : new FunctionFailure('crash', String(err), route.name);
      if (options.log !== false) console.error(`[${route.name}] ${failure.kind}: ${failure.message}`);
      // Once the head is out a failure can only end the response: the client sees it cut short.
      if (sink.started) {
        res.destroy();
        return res.statusCode;
      }
      return failure.kind === 'timeout'
        ? gatewayResponse(res, 'INTEGRATION_TIMEOUT', 504, 'Endpoint request timed out')
        : gatewayResponse(res, 'DEFAULT_5XX', 502, 'Internal server error');
    }
    if (sink.started || res.writableEnded) return res.statusCode; // streamed
    if (!isProxyResult(result)) {
      if (options.log !== false) console.error(`[${route.name}] malformed Lambda proxy response`);
      return gatewayResponse(res, 'DEFAULT_5XX', 502, 'Internal server error');
    }
    const headers: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
    for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.map(String);
    res.writeHead(result.statusCode, headers);
    res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : (result.body ?? ''));
    return result.statusCode;
  }

  let closing = false;
  const guard = requestGuard({
    port: () => (server.address() as AddressInfo).port,
    extraHostNames: options.extraHostNames ?? [],
    sameOriginPaths: options.sameOriginPaths ?? [],
  });
  const server = http.createServer((req, res) => {
    // While draining, a keep-alive connection is closed once its last request is answered.
    if (closing) res.shouldKeepAlive = false;
    res.once('finish', () => closing && server.closeIdleConnections());
    const started = process.hrtime.bigint();
    handle(req, res)
      .catch((err) => {
        console.error('gateway error:', err);
        if (res.headersSent) res.destroy();
        else send(res, 502, JSON.parse(renderGatewayResponse('DEFAULT_5XX', 502, 'Internal server error').body));
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
    close: (graceMs = 0) =>
      new Promise<void>((resolve) => {
        closing = true;
        server.close(() => resolve()); // once every connection has ended
        server.closeIdleConnections();
        if (graceMs <= 0) server.closeAllConnections();
        else setTimeout(() => server.closeAllConnections(), graceMs).unref();
      }),
  };
}
