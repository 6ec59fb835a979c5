import fc from 'fast-check';
import { createId } from '#shared/ids.ts';
import { isIP } from 'node:net';
import type { z } from 'zod/mini';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { rawRequest, type RawResponse } from '#test/helpers/raw-request.ts';
import { classifyAddress } from '#shared/net/address-class.ts';
import {
  errorShapeProblem,
  fillPath,
  isCuidSchema,
  routesUnderTest,
  toJsonSchema,
  unwrap,
  type RouteUnderTest,
} from './routes-under-test.ts';
import {
  anyJsonValue,
  badAuthorization,
  define,
  fieldPaths,
  hostileQuery,
  hostileSegment,
  invalidCuid,
  invalidUrl,
  notJsonContentType,
  validBody,
  setAt,
  truncatedOrBroken,
  weirdText,
  withoutKeys,
  type Hints,
} from './fuzz-inputs.ts';

// Property-based hostile input on every route of the manifest, generated from the route
// contracts (the zod schemas the handlers validate with), so a new route is fuzzed without
// touching this file. For each case the expected answer is predicted from the same schemas
// and the documented order of the HTTP layer (gateway 10 MB → auth → 413 → 415 → malformed
// JSON → validation); then: the status is the predicted 4xx (or, for input that happens to be
// valid, anything but a 5xx), the body has the route's error shape, nothing hangs, and at the
// end the list routes hold exactly what the accepted requests created, byte for byte.

const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
// A fixed seed: every run tries the same cases, so a failure is reproducible and a pass means the
// same thing each time. FUZZ_SEED=<n> explores other cases (the summary prints the seed in use).
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 1_764_000_000;
// A hang detector, not a latency target: at a load of 15 on two cores, 24 routes fuzzed at once
// queue behind the local runtime's instances for many seconds.
const REQUEST_TIMEOUT_MS = 60_000;
const MAX_BODY_BYTES = 16 * 1024; // small, so oversize cases are cheap
const GATEWAY_LIMIT = 10 * 1024 * 1024;
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

let app: TestApp;
let routes: RouteUnderTest[];
const tokens = { user: '', admin: '', leaving: '' };
const ids: Record<string, string> = {};
/** Records made before fuzzing, per list path (they are in the lists besides the fuzz's). */
const seeded: Record<string, Set<string>> = {};

beforeAll(async () => {
  app = await startTestApp({
    pollers: false,
    // Orders make their payment intents, and the webhook checks signatures (none here is signed).
    payments: true,
    env: {
      ADMIN_EMAILS: 'fuzz-admin@example.com',
      MAX_BODY_BYTES: String(MAX_BODY_BYTES),
      PDF_ALLOW_LOOPBACK: 'false',
      WEBHOOK_ALLOW_LOOPBACK: 'false',
      PDF_SYNC_WAIT_MS: '0',
    },
  });
  routes = await routesUnderTest();
  const [user, admin, leaving] = await Promise.all([
    app.signIn('fuzz-user@example.com'),
    app.signIn('fuzz-admin@example.com'),
    app.signIn('fuzz-leaving@example.com'),
  ]);
  tokens.user = user.token;
  tokens.admin = admin.token;
  tokens.leaving = leaving.token;
  const made = async (method: string, path: string, token: string, body: unknown, pick: (b: any) => any) => {
    const res = await app.request(method, path, { token, body });
    if (res.status !== 201) throw new Error(`seed ${method} ${path}: ${res.status} ${res.text}`);
    const record = pick(res.body);
    seeded[path] ??= new Set();
    seeded[path].add(record.id ?? record.fileId);
    return record.id ?? record.fileId;
  };
  ids.chatId = await made('POST', '/chat', tokens.user, { type: 'text', name: 'seed' }, (b) => b.data);
  ids.fileChatId = await made('POST', '/chat', tokens.user, { type: 'file', name: 'seed files' }, (b) => b.data);
  ids.products = await made(
    'POST',
    '/products',
    tokens.admin,
    { name: 'Seed', priceCents: 100, currency: 'EUR' },
    (b) => b,
  );
  ids.orders = await made(
    'POST',
    '/orders',
    tokens.user,
    { items: [{ productId: ids.products, quantity: 1 }] },
    (b) => b,
  );
  ids.productId = ids.products!;
  ids.fileId = await made(
    'POST',
    '/upload',
    tokens.user,
    { fileName: 'seed.pdf', contentType: 'application/pdf', size: 1000 },
    (b) => b.data,
  );
});
afterAll(async () => {
  await app?.stop();
  printSummary();
});

// ---- cases and their predicted answers ----

interface Input {
  /** Raw (percent-encoded) path parameter values. */
  params: Record<string, string>;
  /** Raw query string, without `?`. */
  query?: string;
  /** A JSON value to send (serialised), or raw bytes. */
  body?: { json: unknown } | { raw: string | Buffer };
  /** undefined: application/json when there is a body; null: no header. */
  contentType?: string | null;
  authorization?: string;
}

type Expectation =
  /** `shape`: who answers (the gateway's own responses are API-wide, in the envelope shape). */
  | { kind: 'status'; status: number; why: string; shape?: 'envelope' }
  /** The input is valid: any documented answer but a 5xx. */
  | { kind: 'accept' }
  /** Normalised or unmatched by the gateway: another route (or none) answers; no 5xx. */
  | { kind: 'gateway' };

/** DELETE /me erases whoever calls it: an account of its own, so the other routes keep theirs. */
const tokenFor = (route: RouteUnderTest) =>
  route.auth === 'admin' ? tokens.admin : route.name === 'delete-me' ? tokens.leaving : tokens.user;

function seedParams(route: RouteUnderTest): Record<string, string> {
  // DELETE routes get ids that do not exist, so a case that happens to be valid deletes nothing.
  return Object.fromEntries(
    route.params.map((p) => {
      if (route.method === 'DELETE') return [p, createId()];
      const id = p === 'id' ? ids[route.path.split('/')[1]!] : ids[p];
      return [p, id ?? createId()];
    }),
  );
}

const hints = (): Hints => ({
  chatId: ids.chatId,
  fileId: ids.fileId,
  productId: ids.productId,
  url: 'http://127.0.0.1:9/fuzz.pdf', // loopback: refused with PDF_ALLOW_LOOPBACK=false
});

const seedBody = (route: RouteUnderTest): unknown => validBody(route, hints());

function routePattern(route: RouteUnderTest): RegExp {
  const source = route.path
    .split('/')
    .map((s) => (/^\{\w+\}$/.test(s) ? '([^/]+)' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`);
}

const parses = (schema: z.ZodMiniType | undefined, value: unknown) => {
  if (!schema) return true;
  try {
    return schema.safeParse(value).success;
  } catch {
    return false; // a schema that throws would be a 500 on the server: expect the 400 instead
  }
};

/**
 * Parses JSON as the server does, noting whether any key or string holds a lone surrogate. The
 * reviver visits every value without recursion of ours, so 3,000-deep documents are fine.
 */
function parseNotingIllFormed(text: string): { value: unknown; illFormed: boolean } {
  let illFormed = false;
  const value = JSON.parse(text, (key, v) => {
    if (/\p{Cs}/u.test(key) || (typeof v === 'string' && /\p{Cs}/u.test(v))) illFormed = true;
    return v;
  });
  return { value, illFormed };
}

interface Built {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  expect: Expectation;
}

function build(route: RouteUnderTest, input: Input): Built {
  const path = fillPath(route.path, input.params, (s) => s) + (input.query !== undefined ? `?${input.query}` : '');
  const headers: Record<string, string> = {};
  if (input.authorization !== undefined) headers.authorization = input.authorization;
  else if (route.auth !== 'idp') headers.authorization = `Bearer ${tokenFor(route)}`;
  let body: Buffer | undefined;
  if (input.body) {
    body =
      'json' in input.body ? Buffer.from(JSON.stringify(input.body.json) ?? '', 'utf8') : Buffer.from(input.body.raw);
    if (input.contentType !== null) headers['content-type'] = input.contentType ?? 'application/json';
  }
  const expect = predict(route, input, path, body, headers);
  return { method: route.method, path, headers, ...(body && { body }), expect };
}

function predict(
  route: RouteUnderTest,
  input: Input,
  path: string,
  body: Buffer | undefined,
  headers: Record<string, string>,
): Expectation {
  const status = (s: number, why: string): Expectation => ({ kind: 'status', status: s, why });
  // The gateway: routing on the normalised path, API Gateway's 10 MB, then the route's handler.
  const url = new URL(`${app.url}${path}`);
  const match = routePattern(route).exec(url.pathname.slice('/api/v1'.length));
  if (!match) return { kind: 'gateway' };
  if (body && body.length > GATEWAY_LIMIT)
    return { kind: 'status', status: 413, why: 'over the gateway limit', shape: 'envelope' }; // API Gateway answers, not the route
  // A public route reads no Authorization header: a bad one changes nothing there.
  if (input.authorization !== undefined && route.auth !== 'public') return status(401, 'bad Authorization header');
  const params = Object.fromEntries(
    route.params.map((p, i) => {
      const raw = match[i + 1]!;
      try {
        return [p, decodeURIComponent(raw)];
      } catch {
        return [p, raw];
      }
    }),
  );
  // The webhook reads its raw body only once the provider's signature over it checks out, and no
  // fuzzed request carries one: within the body limit, every one is refused as unsigned.
  if (route.name === 'payment-webhook') {
    return body && body.length > MAX_BODY_BYTES ? status(413, 'over MAX_BODY_BYTES') : status(400, 'unsigned');
  }
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  let parsedBody: unknown = {};
  if (route.contract.body && body?.length) {
    const text = body.toString('utf8');
    if (Buffer.byteLength(text, 'utf8') > MAX_BODY_BYTES) return status(413, 'over MAX_BODY_BYTES');
    const type = headers['content-type']?.trim();
    if (type !== undefined && !JSON_TYPE.test(type)) return status(415, 'not a JSON content type');
    let parsed: ReturnType<typeof parseNotingIllFormed>;
    try {
      parsed = parseNotingIllFormed(text);
    } catch {
      return status(400, 'malformed JSON');
    }
    if (parsed.illFormed) return status(400, 'ill-formed Unicode (lone surrogate)');
    parsedBody = parsed.value;
  }
  const valid =
    parses(route.contract.params, params) &&
    parses(route.contract.query, query) &&
    parses(route.contract.body, parsedBody);
  return valid ? { kind: 'accept' } : status(400, 'fails the route schema');
}

// ---- running cases ----

interface Tally {
  cases: number;
  rejected: number;
  accepted: number;
  rerouted: number;
  skipped: number;
}
const tally: Record<string, Record<string, Tally>> = {};
const created: { route: RouteUnderTest; record: any }[] = [];
const sends: RawResponse[] = [];

function count(category: string, route: string, key: keyof Tally) {
  tally[category] ??= {};
  tally[category][route] ??= { cases: 0, rejected: 0, accepted: 0, rerouted: 0, skipped: 0 };
  tally[category][route][key]++;
}

/**
 * Would this case make the service open a connection beyond loopback (a public address, or a
 * DNS lookup of a name)? Such cases are not sent: tests reach loopback only.
 */
function reachesNetwork(input: Input): boolean {
  if (!input.body || !('json' in input.body)) return false;
  const found: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string') found.push(v);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(input.body.json);
  return found.some((s) => {
    let url: URL;
    try {
      url = new URL(s.trim());
    } catch {
      return false;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) return classifyAddress(host) === 'public';
    return host !== 'localhost';
  });
}

async function runCase(category: string, route: RouteUnderTest, input: Input): Promise<void> {
  if (reachesNetwork(input)) {
    count(category, route.name, 'skipped');
    return;
  }
  const c = build(route, input);
  if (route.auth === 'idp' && input.authorization === undefined) {
    c.headers.authorization = `Bearer ${await app.idToken({ email: 'fuzz-idp@example.com' })}`;
  }
  let res: RawResponse;
  try {
    res = await rawRequest({
      method: c.method,
      base: app.url,
      path: c.path,
      headers: c.headers,
      ...(c.body && { body: c.body }),
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
  } catch (err) {
    throw new Error(`${describeCase(route, c)}: ${(err as Error).message}`);
  }
  const fail = (why: string) => {
    throw new Error(`${describeCase(route, c)} → ${res.status} ${res.text.slice(0, 300)}\n  ${why}`);
  };
  count(category, route.name, 'cases');
  if (res.status >= 500) fail('a 5xx');
  const e = c.expect;
  if (e.kind === 'status') {
    count(category, route.name, 'rejected');
    if (res.status !== e.status) fail(`expected ${e.status} (${e.why})`);
  } else if (e.kind === 'gateway') {
    count(category, route.name, 'rerouted');
    if (res.status < 400 && c.method !== 'GET') fail('a normalised path reached a route that changes data');
  } else {
    count(category, route.name, 'accepted');
    if (process.env.FUZZ_VERBOSE) console.log(`[${category}] accepted: ${describeCase(route, c)} → ${res.status}`);
    const documented = [...Object.keys(route.contract.responses).map(Number), ...route.contract.errors];
    if (!documented.includes(res.status))
      fail(`valid input answered with an undocumented status (documented: ${documented.join(', ')})`);
    // Input the schema lets through but the service must still refuse (a URL it may not fetch).
    if (mustRefuse.has(category) && res.status < 400) fail('accepted input of a kind that must be refused');
    if (res.status === 201) created.push({ route, record: res.json });
    if (route.name === 'send-message') sends.push(res);
  }
  if (res.status >= 400) {
    const shape = e.kind === 'gateway' ? 'either' : e.kind === 'status' && e.shape ? e.shape : route.shape;
    const problem = errorShapeProblem(shape, res.status, res.json);
    if (problem) fail(`error body not in the ${shape} shape: ${problem}`);
  }
}

function describeCase(route: RouteUnderTest, c: Built): string {
  const body = c.body
    ? ` body(${c.body.length}B, ${c.headers['content-type'] ?? 'no content-type'}): ${c.body.toString('utf8').slice(0, 160)}`
    : '';
  return `[${route.name}] ${c.method} ${c.path.slice(0, 200)}${body}`;
}

// ---- categories: each maps a route to an arbitrary of inputs, or undefined when it does not apply ----

type Category = (route: RouteUnderTest) => fc.Arbitrary<Input> | undefined;

const withBody = (route: RouteUnderTest, json: fc.Arbitrary<unknown>): fc.Arbitrary<Input> =>
  json.map((value) => ({ params: seedParams(route), body: { json: value } }));

const bodyFields = (route: RouteUnderTest) => (route.bodySchema ? fieldPaths(route.bodySchema) : []);
const stringFields = (route: RouteUnderTest) =>
  bodyFields(route).filter((f) => f.schema.type === 'string' || f.schema.enum);

function atField(route: RouteUnderTest, fields: { path: (string | number)[] }[], value: fc.Arbitrary<unknown>) {
  if (!fields.length) return undefined;
  return withBody(
    route,
    fc
      .tuple(fc.constantFrom(...fields), value)
      .map(([f, v]) => setAt(seedBody(route), f.path, v, route.bodySchema!, hints())),
  );
}

const categories: Record<string, Category> = {
  'wrong types': (route) =>
    route.bodySchema &&
    fc.oneof(
      withBody(
        route,
        anyJsonValue.filter((v) => !(v && typeof v === 'object' && !Array.isArray(v))),
      ),
      ...(bodyFields(route).length ? [atField(route, bodyFields(route), anyJsonValue)!] : []),
    ),

  'missing fields': (route) => {
    if (!route.bodySchema)
      return route.params.length
        ? fc.constant({ params: Object.fromEntries(route.params.map((p) => [p, ''])) })
        : undefined;
    const seed = seedBody(route) as Record<string, unknown>;
    const required = (unwrap(route.bodySchema).required ?? []) as string[];
    const keys = [...new Set([...required, ...Object.keys(seed)])];
    return fc.oneof(
      ...(keys.length
        ? [
            fc
              .subarray(keys, { minLength: 1 })
              .map((drop) => ({ params: seedParams(route), body: { json: withoutKeys(seed, drop) } })),
          ]
        : []),
      fc.constant({ params: seedParams(route) }), // no body at all
      fc.constant({ params: seedParams(route), body: { raw: '' } }),
      fc.constant({ params: seedParams(route), body: { json: {} } }),
    );
  },

  'extra fields': (route) => {
    if (!route.bodySchema) return undefined;
    const known = new Set(Object.keys(unwrap(route.bodySchema).properties ?? {}));
    const key = fc
      .oneof(
        fc.constantFrom(
          '__proto__',
          'constructor',
          'prototype',
          'toString',
          'PK',
          'SK',
          'GSI1PK',
          'userId',
          'id',
          'role',
          'status',
          'createdAt',
          'sequenceNumber',
          'statusCode',
        ),
        fc.string({ minLength: 1, maxLength: 20 }),
      )
      .filter((k) => !known.has(k));
    return withBody(
      route,
      fc.array(fc.tuple(key, fc.jsonValue({ maxDepth: 2 })), { minLength: 1, maxLength: 4 }).map((extra) => {
        const body = { ...(seedBody(route) as object) } as Record<string, unknown>;
        for (const [k, v] of extra) define(body, k, v);
        return body;
      }),
    );
  },

  'huge strings': (route) => {
    const huge = fc
      .tuple(
        fc.integer({ min: 300, max: 40_000 }),
        fc.constantFrom('a', 'é', '😀', '\u0000', ' ', '<', '\\', '"', '\ud800'),
      )
      .map(([n, ch]) => ch.repeat(n));
    const arbs: fc.Arbitrary<Input>[] = [];
    if (route.bodySchema && bodyFields(route).length) arbs.push(atField(route, bodyFields(route), huge)!);
    if (route.params.length) {
      arbs.push(
        fc
          .tuple(fc.constantFrom(...route.params), fc.integer({ min: 100, max: 6_000 }))
          .map(([p, n]) => ({ params: { ...seedParams(route), [p]: 'a'.repeat(n) } })),
      );
    }
    if (route.contract.query)
      arbs.push(
        fc
          .integer({ min: 100, max: 6_000 })
          .map((n) => ({ params: seedParams(route), query: `cursor=${'A'.repeat(n)}&limit=${'9'.repeat(n % 400)}` })),
      );
    return arbs.length ? fc.oneof(...arbs) : undefined;
  },

  'deep JSON': (route) => {
    if (!route.contract.body) return undefined;
    const deep = fc
      .tuple(fc.integer({ min: 20, max: 3_000 }), fc.constantFrom('array', 'object', 'mixed'))
      .map(([depth, kind]) =>
        kind === 'array'
          ? `${'['.repeat(depth)}${']'.repeat(depth)}`
          : kind === 'object'
            ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
            : `${'[{"a":'.repeat(depth)}0${'}]'.repeat(depth)}`,
      );
    const fields = bodyFields(route).filter((f) => f.path.length === 1);
    return fc.oneof(
      deep.map((raw) => ({ params: seedParams(route), body: { raw } })),
      ...(fields.length
        ? [
            fc.tuple(fc.constantFrom(...fields), deep).map(([f, raw]) => {
              const rest = JSON.stringify(withoutKeys(seedBody(route), [String(f.path[0])])).slice(1, -1);
              return {
                params: seedParams(route),
                body: { raw: `{${rest}${rest ? ',' : ''}${JSON.stringify(f.path[0])}:${raw}}` },
              };
            }),
          ]
        : []),
    );
  },

  'invalid CUIDs': (route) => {
    const arbs: fc.Arbitrary<Input>[] = [];
    const cuidParams = route.params.filter((p) => {
      const s = route.contract.params && toJsonSchema(route.contract.params).properties?.[p];
      return s && isCuidSchema(unwrap(s));
    });
    if (cuidParams.length) {
      arbs.push(
        fc.tuple(fc.constantFrom(...cuidParams), invalidCuid).map(([p, bad]) => ({
          params: { ...seedParams(route), [p]: encodeURIComponent(bad.replace(/\p{Cs}/gu, '\ufffd')) },
        })),
      );
    }
    const cuidFields = bodyFields(route).filter((f) => isCuidSchema(f.schema));
    if (cuidFields.length) arbs.push(atField(route, cuidFields, invalidCuid)!);
    return arbs.length ? fc.oneof(...arbs) : undefined;
  },

  'invalid URLs': (route) => {
    const urlFields = bodyFields(route).filter(
      (f) => f.schema.type === 'string' && (f.schema.format === 'uri' || /url$/i.test(String(f.path.at(-1)))),
    );
    return urlFields.length ? atField(route, urlFields, invalidUrl) : undefined;
  },

  'unicode and control characters': (route) => {
    const arbs: fc.Arbitrary<Input>[] = [];
    if (stringFields(route).length) arbs.push(atField(route, stringFields(route), weirdText)!);
    // Lone surrogates cannot be percent-encoded as UTF-8: they go as the bytes a broken client sends.
    const encode = (s: string) =>
      s
        .replace(/\p{Cs}/gu, '%ED%A0%80')
        .split(/(%ED%A0%80)/)
        .map((p) => (p === '%ED%A0%80' ? p : encodeURIComponent(p)))
        .join('');
    if (route.params.length)
      arbs.push(
        fc
          .tuple(fc.constantFrom(...route.params), weirdText)
          .map(([p, s]) => ({ params: { ...seedParams(route), [p]: encode(s) } })),
      );
    if (route.contract.query)
      arbs.push(weirdText.map((s) => ({ params: seedParams(route), query: `cursor=${encode(s)}` })));
    return arbs.length ? fc.oneof(...arbs) : undefined;
  },

  'malformed JSON': (route) => {
    const valid = route.contract.body ? JSON.stringify(seedBody(route)) : '{"a":1}';
    return fc.oneof(
      truncatedOrBroken(valid).map((raw) => ({ params: seedParams(route), body: { raw } })),
      fc
        .uint8Array({ minLength: 1, maxLength: 64 })
        .map((bytes) => ({ params: seedParams(route), body: { raw: Buffer.from(bytes) } })),
    ) as fc.Arbitrary<Input>;
  },

  'wrong content types': (route) =>
    fc.tuple(notJsonContentType, fc.boolean()).map(([contentType, form]) => ({
      params: seedParams(route),
      body: { raw: form ? 'type=text&name=x' : JSON.stringify(seedBody(route) ?? {}) },
      contentType,
    })),

  'oversize bodies': (route) =>
    fc.integer({ min: 1, max: 4 * MAX_BODY_BYTES }).map((extra) => {
      const base = (seedBody(route) ?? {}) as Record<string, unknown>;
      const field = Object.keys(base).find((k) => typeof base[k] === 'string') ?? 'padding';
      return { params: seedParams(route), body: { json: { ...base, [field]: 'x'.repeat(MAX_BODY_BYTES + extra) } } };
    }),

  'path parameters': (route) =>
    route.params.length
      ? fc
          .tuple(fc.constantFrom(...route.params), hostileSegment)
          .map(([p, raw]) => ({ params: { ...seedParams(route), [p]: raw } }))
      : undefined,

  'query strings': (route) =>
    fc
      .constant(null)
      .chain(() => hostileQuery())
      .map((query) => ({ params: seedParams(route), query })),

  'authorization headers': (route) =>
    badAuthorization(tokenFor(route) || 'x.y.z').map((authorization) => ({
      params: seedParams(route),
      authorization,
      ...(route.contract.body && { body: { json: seedBody(route) } }),
    })),
};

/** Categories whose every case must end in a 4xx, even when it passes the route's schema. */
const mustRefuse = new Set(['invalid URLs', 'extra fields', 'deep JSON', 'invalid CUIDs', 'authorization headers']);

/** Fewer runs for the expensive categories. */
const runsOf: Record<string, number> = {
  'oversize bodies': Math.max(3, Math.round(RUNS / 8)),
  'missing fields': Math.max(8, Math.round(RUNS / 2)),
};

describe.each(Object.keys(categories))('%s', (category) => {
  test('every route answers a 4xx in its body shape (or, for valid input, no 5xx)', async () => {
    const results = await Promise.allSettled(
      routes.map(async (route) => {
        const arb = categories[category]!(route);
        if (!arb) return;
        await fc.assert(
          fc.asyncProperty(arb, (input) => runCase(category, route, input)),
          // An interrupted run checked fewer cases than it claims: it fails rather than passes.
          {
            numRuns: runsOf[category] ?? RUNS,
            seed: SEED,
            endOnFailure: false,
            interruptAfterTimeLimit: 150_000,
            markInterruptAsFailure: true,
          },
        );
      }),
    );
    // fast-check's report (seed, counterexample) and the case's own account of what went wrong.
    const failures = results
      .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      .map((r) => `${String(r.reason?.message ?? r.reason).split('\nHint')[0]}\n${r.reason?.cause?.message ?? ''}`);
    expect(failures).toEqual([]);
    const ran = Object.values(tally[category] ?? {}).reduce((n, t) => n + t.cases, 0);
    expect(ran).toBeGreaterThan(0);
  }, 300_000);
});

test('every route of the manifest was fuzzed, in every category that applies to it', () => {
  const categoriesOf = (name: string) =>
    Object.entries(tally)
      .filter(([, byRoute]) => (byRoute[name]?.cases ?? 0) > 0)
      .map(([c]) => c);
  for (const route of routes) {
    const expected = Object.keys(categories).filter(
      (c) => c !== 'oversize bodies' && categories[c]!(route) !== undefined,
    );
    expect([route.name, categoriesOf(route.name)]).toEqual([route.name, expect.arrayContaining(expected)]);
  }
});

test('requests over API Gateway’s 10 MB are 413 in the route’s body shape, on every route', async () => {
  const huge = Buffer.alloc(GATEWAY_LIMIT + 1, 'a');
  for (const route of routes) {
    await runCase('oversize bodies', route, { params: seedParams(route), body: { raw: huge } });
  }
  expect(tally['oversize bodies']?.[routes[0]!.name]?.cases).toBeGreaterThan(0);
}, 120_000);

// ---- what the fuzz found, pinned as examples ----

describe('findings, kept as plain examples', () => {
  test('a query or header key named __proto__ or constructor is a 400 (not a 502 from the gateway)', async () => {
    for (const query of ['__proto__=1', 'constructor=1', 'limit=5&__proto__=x&__proto__=y']) {
      const res = await rawRequest({
        method: 'GET',
        base: app.url,
        path: `/chat?${query}`,
        headers: { authorization: `Bearer ${tokens.user}` },
      });
      expect([res.status, errorShapeProblem('envelope', res.status, res.json)]).toEqual([400, undefined]);
    }
    const res = await rawRequest({
      method: 'GET',
      base: app.url,
      path: '/orders',
      headers: { authorization: `Bearer ${tokens.user}`, constructor: 'x', ['__proto__']: 'y' },
    });
    expect(res.status).toBe(200);
  });

  test('a JSON null body is a 400, not an empty object (nothing is created)', async () => {
    const before = (await listAll('/orders', tokens.user)).length;
    const res = await rawRequest({
      method: 'POST',
      base: app.url,
      path: '/orders',
      body: 'null',
      headers: { authorization: `Bearer ${tokens.user}`, 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      message: 'Request validation failed',
      errors: [expect.objectContaining({ path: 'body' })],
    });
    expect(await listAll('/orders', tokens.user)).toHaveLength(before);
  });

  test('strings with a lone surrogate are refused (UTF-8 stores cannot hold them); NUL and other controls round-trip', async () => {
    for (const body of ['{"type":"text","name":"a\\ud800b"}', '{"type":"text","\\udc00":"x"}']) {
      const res = await rawRequest({
        method: 'POST',
        base: app.url,
        path: '/chat',
        body,
        headers: { authorization: `Bearer ${tokens.user}` },
      });
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({
        success: false,
        statusCode: 400,
        errors: [expect.objectContaining({ message: expect.stringMatching(/lone surrogate/) })],
      });
    }
    const name = 'nul\u0000 bidi\u202e 😀 e\u0301';
    const res = await app.request('POST', '/chat', { token: tokens.user, body: { type: 'text', name } });
    expect(res.status).toBe(201);
    seeded['/chat'] ??= new Set();
    seeded['/chat'].add(res.body.data.id);
    expect((await listAll('/chat', tokens.user)).find((c) => c.id === res.body.data.id).chatName).toBe(name);
  });
});

// ---- nothing stored but what valid requests created ----

async function listAll(path: string, token: string, query = ''): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; body: any; headers: Headers } = await app.request(
      'GET',
      `${path}?limit=100${query && `&${query}`}${cursor ? `&cursor=${cursor}` : ''}`,
      { token },
    );
    expect(res.status).toBe(200);
    out.push(...(Array.isArray(res.body) ? res.body : res.body.data));
    cursor = res.headers.get('x-next-cursor');
  } while (cursor);
  return out;
}

// Routes whose records another path lists: a file begun as a multipart upload is a file like any other.
const LISTED_UNDER: Record<string, string> = { '/upload/multipart': '/upload' };
const listPathOf = (route: { path: string }) => LISTED_UNDER[route.path] ?? route.path;

test('the lists hold exactly the seeds and what accepted requests created, stored as answered', async () => {
  const creators = routes.filter((r) => r.method === 'POST' && 201 in r.contract.responses);
  const listed: string[] = [];
  for (const route of creators) {
    const lister = routes.find((r) => r.method === 'GET' && r.path === route.path);
    if (!lister) continue;
    listed.push(route.name);
    const token = tokenFor(route);
    const mine = created
      .filter((c) => listPathOf(c.route) === route.path)
      .map((c) => (c.route.shape === 'bare' ? c.record : c.record.data));
    const items = await listAll(route.path, token);
    // Files are named by fileId (GET /upload lists them).
    const idOf = (r: any) => r.id ?? r.fileId;
    const expected = [...(seeded[route.path] ?? []), ...mine.map(idOf)].sort();
    expect(items.map(idOf).sort()).toEqual(expected);
    // What was stored is what was answered: no truncation, no replaced characters. (GET /upload
    // shows each file's status, not its upload URLs; GET /me/api-keys shows when a key was last
    // used, never the key: the fields both carry must agree.)
    const partial = route.path === '/upload' || route.path === '/me/api-keys';
    for (const record of mine) {
      const item = items.find((i) => idOf(i) === idOf(record));
      const shared = partial ? Object.keys(record).filter((k) => k in item && k !== 'status') : Object.keys(item);
      expect(Object.fromEntries(shared.map((k) => [k, item[k]]))).toEqual(
        partial ? Object.fromEntries(shared.map((k) => [k, record[k]])) : record,
      );
    }
  }
  expect(listed).toEqual(expect.arrayContaining(['create-chat', 'create-order', 'create-product']));

  // Messages: exactly a user message and a reply per prompt that was answered 200. Prompts sent
  // at once follow one another, so their replies may end different branches: read each one's.
  // (A streamed reply names itself in its first event.)
  const answered = sends
    .filter((r) => r.status === 200)
    .map((r) => ({ messageId: r.json?.data?.messageId ?? /"messageId":"(\w+)"/.exec(r.text)?.[1] }));
  const found = new Map<string, any>();
  for (const { messageId } of answered)
    for (const m of await listAll(`/chat/${ids.chatId}/messages`, tokens.user, `leaf=${messageId}`)) found.set(m.id, m);
  const messages = [...found.values()];
  expect(messages.filter((m) => m.messageType === 'user')).toHaveLength(answered.length);
  expect(
    messages
      .filter((m) => m.messageType === 'ai')
      .map((m) => m.id)
      .sort(),
  ).toEqual(answered.map((a) => a.messageId).sort());

  // Uploads: each accepted one exists, and the seed file took no ingestion from a refused URL.
  const uploads = created.filter((c) => c.route.name === 'create-upload');
  for (const u of uploads)
    expect((await app.request('GET', `/message/pdf/${u.record.data.fileId}`, { token: tokens.user })).status).toBe(200);
  const seedFile = await app.request('GET', `/message/pdf/${ids.fileId}`, { token: tokens.user });
  expect(seedFile.body.data.embeddingsData.status).toBe('uploaded');
});

function printSummary() {
  const lines = [`Fuzz summary (seed ${SEED}, ${RUNS} runs per route and category; replay with FUZZ_SEED=${SEED}):`];
  let total = 0;
  for (const [category, byRoute] of Object.entries(tally)) {
    const sum = Object.values(byRoute).reduce(
      (a, t) => ({
        cases: a.cases + t.cases,
        rejected: a.rejected + t.rejected,
        accepted: a.accepted + t.accepted,
        rerouted: a.rerouted + t.rerouted,
        skipped: a.skipped + t.skipped,
      }),
      { cases: 0, rejected: 0, accepted: 0, rerouted: 0, skipped: 0 },
    );
    total += sum.cases;
    lines.push(
      `  ${category.padEnd(32)} ${String(sum.cases).padStart(6)} cases on ${String(Object.keys(byRoute).length).padStart(2)} routes: ${sum.rejected} refused with the predicted 4xx, ${sum.accepted} passed the schema (2xx or a documented 4xx), ${sum.rerouted} re-routed by the gateway (4xx or a GET)${sum.skipped ? `, ${sum.skipped} not sent (would leave loopback)` : ''}`,
    );
  }
  lines.push(`  total: ${total} requests`);
  console.log(lines.join('\n'));
}
