import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { performance } from 'node:perf_hooks';
import { startGateway, type Gateway } from '../infra/local/gateway.ts';
import { inProcessInvoker, type Invoker } from '../infra/local/invoker.ts';
import { httpRoutes, type HttpRoute } from '../infra/routes.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ChatRepository } from '#shared/chats/conversations/chat-repository.ts';
import { createChatBody, listQuery } from '#shared/chats/schemas.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { UnauthenticatedError } from '#shared/errors.ts';
import { bearerToken, serviceTokenSettings, ServiceTokens } from '#shared/auth/service-token.ts';
import { isoNow, systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { UserRepository } from '#shared/users/user-repository.ts';
import type { Benchmark } from './lib/context.ts';
import { keepAliveAgent, request, runLoad } from './lib/http.ts';
import { info, median, p99, ratioCheck, type Check, type DetailTable } from './lib/report.ts';

// Request overhead: GET /chat and POST /chat through the local gateway, p50 and p99 at
// concurrency 1 and 16, against a baseline handler that makes the same DynamoDB call (the same
// repository method) with no middleware, served by the same gateway code and, like the real
// function, in an instance of its own (row "baseline, isolated"). Target: p50 ≤ 1.3 ×.
//
// Between the baseline and the real function sit: middy (request id, error mapping, body
// parsing, zod validation, the envelope), the service JWT's verification and the user lookup
// (one GetItem, so a deleted user's token stops working at once; on reads it runs beside the
// route's own read, and nothing is answered until both are back). Variants that add one layer at
// a time give the breakdown. The real functions run isolated (a child process per instance, see
// infra/local/function-instances.ts); the row "baseline, isolated" is the baseline run the same
// way, so real ÷ that row is the middleware's share (the target) and that row ÷ baseline the
// isolation's (reported beside it: a cost of the local runtime only, as in AWS every function
// is its own sandbox anyway). Warm instances verify a token's signature once (by its bytes;
// expiry checked on every request). The proposal (not in the service; shown for its figures):
//   C  the user record cached for 30 s per warm instance: weaker (a deleted or demoted user keeps
//      access for up to 30 s on warm instances), shown for its figures only.

// Concurrency 1: one request per variant per round, variants in a new order each round, so
// the machine's slow drifts (other processes, GC) hit every variant alike. Concurrency 16: a
// batch per variant per round (the load must be of one variant to measure its queueing).
const ROUNDS_AT_1 = 300;
const ROUNDS_AT_16 = 20;
const BATCH_AT_16 = 48;
const WARMUP = 60;
const P50_RATIO_MAX = 1.3;
const CHATS_OF_READER = 20; // one full page of GET /chat
const USER_CACHE_MS = 30_000;

type Handler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;
type Route = 'GET /chat' | 'POST /chat';
type Concurrency = 1 | 16;

interface Variant {
  name: string;
  route: Route;
  /** What this variant adds to the previous one. */
  adds: string;
  url: () => string;
}

const json = (statusCode: number, body: unknown): APIGatewayProxyResult => ({
  statusCode,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify(body),
});

/** The handlers of the baseline, the breakdown and the proposal, served by a gateway of their own. */
function variantHandlers(readerId: string, writerId: string): Record<string, unknown> {
  const chats = new ChatRepository(dynamo(), tableName());
  const users = new UserRepository(dynamo(), tableName());
  // `idp` skips the service's authentication middleware; everything else of middy stays.
  const noAuth = (route: HttpRoute): HttpRoute => ({ ...route, auth: 'idp' });
  const tokens = new ServiceTokens(serviceTokenSettings(config()), systemClock);
  const claims = async (headers: Record<string, string | undefined>) => tokens.verify(bearerToken(headers));
  const list = (userId: string, query: { limit: number; cursor?: string }) =>
    chats.listByUser(userId, query).then((p) => p.items);

  // Proposal C (weakens the check): the user record kept for USER_CACHE_MS per warm instance.
  const userCache = new Map<string, { until: number; exists: boolean }>();
  const cachedUserExists = async (userId: string) => {
    const hit = userCache.get(userId);
    if (hit && hit.until > Date.now()) return hit.exists;
    const exists = (await users.get(userId)) !== undefined;
    userCache.set(userId, { until: Date.now() + USER_CACHE_MS, exists });
    return exists;
  };
  const gone = () => new UnauthenticatedError('The user of this token no longer exists');

  const listChats = noAuth(httpRoutes['list-chats']);
  const createChat = noAuth(httpRoutes['create-chat']);
  return {
    'get-baseline': (async () => json(200, await list(readerId, { limit: 20 }))) satisfies Handler,
    'get-middy': httpHandler(listChats, { query: listQuery }, async ({ query }) => ({
      data: await list(readerId, query),
    })),
    'get-middy-jwt': httpHandler(listChats, { query: listQuery }, async ({ query, headers }) => {
      const { userId } = await claims(headers);
      return { data: await list(userId, query) };
    }),
    'get-proposal-c': httpHandler(listChats, { query: listQuery }, async ({ query, headers }) => {
      const { userId } = await claims(headers);
      if (!(await cachedUserExists(userId))) throw gone();
      return { data: await list(userId, query) };
    }),
    'post-baseline': (async (event) =>
      json(201, await chats.create(writerId, JSON.parse(event.body ?? '{}'), isoNow(systemClock)))) satisfies Handler,
    'post-middy': httpHandler(createChat, { body: createChatBody }, async ({ body }) => ({
      statusCode: 201,
      data: await chats.create(writerId, body, isoNow(systemClock)),
    })),
    'post-middy-jwt': httpHandler(createChat, { body: createChatBody }, async ({ body, headers }) => {
      const { userId } = await claims(headers);
      return { statusCode: 201, data: await chats.create(userId, body, isoNow(systemClock)) };
    }),
    'post-proposal-c': httpHandler(createChat, { body: createChatBody }, async ({ body, headers }) => {
      const { userId } = await claims(headers);
      if (!(await cachedUserExists(userId))) throw gone();
      return { statusCode: 201, data: await chats.create(userId, body, isoNow(systemClock)) };
    }),
  };
}

export const requestOverhead: Benchmark = {
  name: 'request-overhead',
  title: 'GET and POST /chat through the gateway against a no-middleware handler making the same DynamoDB call',
  async run(ctx) {
    const svc = await ctx.service();
    const reader = await svc.signIn('bench-reader@example.com');
    const writer = await svc.signIn('bench-writer@example.com');
    for (let i = 0; i < CHATS_OF_READER; i++) {
      const r = await svc.api('POST', '/chat', reader.token, { name: `chat ${i}`, type: 'text' });
      if (r.status !== 201) throw new Error(`seeding chats: ${r.status} ${r.body}`);
    }

    const handlers = variantHandlers(reader.userId, writer.userId);
    const route = (name: string, method: 'GET' | 'POST') => ({
      name,
      entry: name,
      ...(method === 'GET' ? httpRoutes['list-chats'] : httpRoutes['create-chat']),
      path: `/${name}`,
    });
    // The variants run in this process; the isolated baselines in the runtime's instances, as the service's functions do.
    const ISOLATED = 'bench/fixtures/baseline-isolated.ts';
    const inProcess = inProcessInvoker(async (entry) => handlers[entry]);
    const invoker: Invoker = {
      invoke: (fn, event, sink) => (fn.entry === ISOLATED ? svc.runtime.functions : inProcess).invoke(fn, event, sink),
      close: async () => undefined,
    };
    const gateway: Gateway = await startGateway({
      port: 0,
      log: false,
      routes: [
        ...Object.keys(handlers).map((name) => route(name, name.startsWith('get') ? 'GET' : 'POST')),
        { ...route('get-baseline-isolated', 'GET'), entry: ISOLATED },
        { ...route('post-baseline-isolated', 'POST'), entry: ISOLATED },
      ],
      invoker,
    });
    const agent = keepAliveAgent(32);
    try {
      const at = (name: string) => () => `${gateway.url}/${name}`;
      // The same ladder for both routes, each rung adding one thing to the one before.
      const ladder = (
        route: Variant['route'],
        prefix: 'get' | 'post',
        userId: string,
        adds: { middy: string; real: string },
      ): Variant[] => [
        { name: 'baseline', route, adds: 'the repository call alone', url: at(`${prefix}-baseline`) },
        {
          name: 'baseline, isolated',
          route,
          adds: 'its own instance (a child process)',
          url: () => `${at(`${prefix}-baseline-isolated`)()}?user=${userId}`,
        },
        { name: 'middy', route, adds: adds.middy, url: at(`${prefix}-middy`) },
        { name: 'middy + JWT', route, adds: 'service JWT verification', url: at(`${prefix}-middy-jwt`) },
        { name: 'real', route, adds: adds.real, url: () => `${svc.url}/chat` },
        {
          name: 'proposal C',
          route,
          adds: `real, user cached ${USER_CACHE_MS / 1000} s (weaker)`,
          url: at(`${prefix}-proposal-c`),
        },
      ];
      const variants: Variant[] = [
        ...ladder('GET /chat', 'get', reader.userId, {
          middy: 'middy, validation, envelope',
          real: 'user lookup (GetItem) beside the read',
        }),
        ...ladder('POST /chat', 'post', writer.userId, {
          middy: 'middy, body parsing, validation, envelope',
          real: 'user lookup (GetItem) before the write',
        }),
      ];
      const send = (v: Variant) => {
        const token = v.route === 'GET /chat' ? reader.token : writer.token;
        const headers: Record<string, string> = { authorization: `Bearer ${token}` };
        if (v.route === 'GET /chat') return () => request(v.url(), { method: 'GET', headers, agent });
        headers['content-type'] = 'application/json';
        const body = JSON.stringify({ name: 'bench chat', type: 'text' });
        return () => request(v.url(), { method: 'POST', headers, body, agent });
      };
      const expectOf = (v: Variant) => (v.route === 'GET /chat' ? 200 : 201);

      ctx.log('request-overhead: warming up');
      for (const v of variants) await runLoad(WARMUP, 4, send(v), expectOf(v));

      const samples = new Map<string, number[]>();
      const key = (v: Variant, c: Concurrency) => `${v.route}|${v.name}|${c}`;
      const record = (v: Variant, c: Concurrency, lat: number[]) =>
        samples.set(key(v, c), [...(samples.get(key(v, c)) ?? []), ...lat]);
      ctx.log(`request-overhead: concurrency 1, ${ROUNDS_AT_1} rounds of one request per variant`);
      for (let round = 0; round < ROUNDS_AT_1; round++) {
        for (const v of [...variants].sort(() => Math.random() - 0.5))
          record(v, 1, await runLoad(1, 1, send(v), expectOf(v)));
      }
      ctx.log(`request-overhead: concurrency 16, ${ROUNDS_AT_16} rounds of ${BATCH_AT_16} requests per variant`);
      for (let round = 0; round < ROUNDS_AT_16; round++) {
        for (const v of [...variants].sort(() => Math.random() - 0.5))
          record(v, 16, await runLoad(BATCH_AT_16, 16, send(v), expectOf(v)));
      }

      // The pieces on their own, called directly (no HTTP), interleaved.
      ctx.log('request-overhead: timing the pieces directly');
      const chats = new ChatRepository(dynamo(), tableName());
      const users = new UserRepository(dynamo(), tableName());
      const tokens = new ServiceTokens(serviceTokenSettings(config()), systemClock);
      const pieces: Record<string, () => Promise<unknown>> = {
        'JWT verify (jose HS256)': () => tokens.verify(reader.token),
        'user lookup (GetItem)': () => users.get(reader.userId),
        'GET /chat own call (Query GSI1)': () => chats.listByUser(reader.userId, { limit: 20 }),
        'POST /chat own call (PutItem)': () =>
          chats.create(writer.userId, { type: 'text', name: 'bench chat' }, isoNow(systemClock)),
      };
      const pieceSamples = new Map<string, number[]>(Object.keys(pieces).map((k) => [k, []]));
      for (let i = 0; i < 300; i++) {
        for (const [name, fn] of Object.entries(pieces)) {
          const t0 = performance.now();
          await fn();
          pieceSamples.get(name)!.push(performance.now() - t0);
        }
      }

      const checks: Check[] = [];
      const details: DetailTable[] = [];
      for (const r of ['GET /chat', 'POST /chat'] as const) {
        const base = variants.find((v) => v.route === r && v.name === 'baseline')!;
        const isolated = variants.find((v) => v.route === r && v.name === 'baseline, isolated')!;
        const real = variants.find((v) => v.route === r && v.name === 'real')!;
        for (const c of [1, 16] as const) {
          // The target compares like with like: the real function and the bare handler, both in
          // instances of their own. What the isolation itself costs is the next row.
          const b = samples.get(key(isolated, c))!;
          const s = samples.get(key(real, c))!;
          checks.push(ratioCheck(`${r} p50 @${c}`, median(s), median(b), 'ms', { max: P50_RATIO_MAX }));
          checks.push(info(`${r} p99 @${c}`, p99(s), 'ms', { baseline: p99(b), ratio: p99(s) / p99(b) }));
          const inProcess = samples.get(key(base, c))!;
          checks.push(
            info(`${r} isolation, p50 @${c} (bare handler isolated ÷ in process)`, median(b), 'ms', {
              baseline: median(inProcess),
              ratio: median(b) / median(inProcess),
            }),
          );
        }
        details.push({
          title: `${r}: one layer at a time (ms; ratio = p50 / baseline p50)`,
          header: ['variant', 'adds', 'p50 @1', 'p99 @1', 'ratio @1', 'p50 @16', 'p99 @16', 'ratio @16'],
          rows: variants
            .filter((v) => v.route === r)
            .map((v) => {
              const s1 = samples.get(key(v, 1))!;
              const s16 = samples.get(key(v, 16))!;
              return [
                v.name,
                v.adds,
                median(s1),
                p99(s1),
                `${(median(s1) / median(samples.get(key(base, 1))!)).toFixed(2)} ×`,
                median(s16),
                p99(s16),
                `${(median(s16) / median(samples.get(key(base, 16))!)).toFixed(2)} ×`,
              ];
            }),
        });
      }
      details.push({
        title: 'the pieces, called directly (ms, 300 calls each, interleaved)',
        header: ['piece', 'p50', 'p99'],
        rows: [...pieceSamples].map(([name, s]) => [name, median(s), p99(s)]),
      });
      return {
        checks,
        details,
        notes: [
          `Per variant: ${ROUNDS_AT_1} requests at concurrency 1 (one per variant per round, shuffled), ${ROUNDS_AT_16} × ${BATCH_AT_16} at concurrency 16 (a batch per variant per round, shuffled), after ${WARMUP} warm-up requests; keep-alive connections; the client, the gateway and the in-process variants share one process, the service's functions and the isolated baseline run in instances of their own (child processes), the emulators in another.`,
          'The functions log at SILENT here; deployed, each request also writes one INFO log line.',
        ],
        data: {
          samples: Object.fromEntries(samples),
          pieces: Object.fromEntries([...pieceSamples].map(([k, s]) => [k, { p50: median(s), p99: p99(s) }])),
        },
      };
    } finally {
      agent.destroy();
      await gateway.close();
    }
  },
};
