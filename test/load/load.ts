import { pathToFileURL } from 'node:url';
import { signLocalIdToken } from '../../infra/local/local-idp.ts';

// A bounded load run against a running service (the local runtime, `npm start`, or any base
// URL): `streams` streamed replies and `json` JSON requests, all fired at once, on loopback.
// Returns latency figures (ms) per kind; every non-2xx answer, every stream that does not end
// with [DONE] or carries `event: error`, and every timeout counts as an error.
//
//   import { runLoad, signInLocal } from '../test/load/load.ts';
//   const tokens = await signInLocal(url, dataDir, 5);          // users of a local runtime
//   const figures = await runLoad({ url, tokens, streams: 50, json: 200 });
//   console.log(formatLoad(figures));
//
// Run alone: `LOAD_URL=http://localhost:3000/api/v1 LOAD_DATA_DIR=.data npx tsx test/load/load.ts`
// (LOAD_STREAMS, LOAD_JSON and LOAD_USERS override the counts; the server needs
// ADMIN_EMAILS=load-0@example.com, the user who makes the product the mix orders); prints the figures as JSON.

export interface LoadOptions {
  /** Base URL, ending in /api/v1. */
  url: string;
  /** Service tokens (from POST /auth); requests are spread over them. */
  tokens: string[];
  /** Streamed replies at once (POST /message/logged-in, stream: true). Default 50. */
  streams?: number;
  /** JSON requests at once (a mix of reads and order writes). Default 200. */
  json?: number;
  /** Fire the streams and the JSON requests together (default) or one kind after the other. */
  together?: boolean;
  /** Per-request limit; a request that takes longer is an error. Default 60 s. */
  timeoutMs?: number;
}

export interface Latency {
  count: number;
  errors: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface LoadResult {
  /** Whole streams, first request byte to [DONE]. */
  streams: Latency & { firstEventP50: number; firstEventP99: number };
  json: Latency & { byRoute: Record<string, number> };
  wallMs: number;
  /** What went wrong, one line per failed request (at most 20). */
  failures: string[];
}

/** fetch hides the socket error in `cause`. */
const describeError = (err: unknown) => {
  const e = err as Error & { cause?: Error & { code?: string } };
  return e.cause ? `${e.message}: ${e.cause.code ?? ''} ${e.cause.message}` : e.message;
};

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[rank]! * 10) / 10;
}

function figures(ms: number[], errors: number): Latency {
  const sorted = [...ms].sort((a, b) => a - b);
  const mean = sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : 0;
  return {
    count: ms.length + errors,
    errors,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: percentile(sorted, 100),
    mean: Math.round(mean * 10) / 10,
  };
}

/** Signs in `n` users of a local runtime whose DATA_DIR holds the local identity provider's key. */
export async function signInLocal(url: string, dataDir: string, n: number, prefix = 'load'): Promise<string[]> {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const idToken = await signLocalIdToken(dataDir, { email: `${prefix}-${i}@example.com` });
      const res = await fetch(`${url}/auth`, { method: 'POST', headers: { authorization: `Bearer ${idToken}` } });
      if (res.status !== 200 && res.status !== 201)
        throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { data: { token: string } }).data.token;
    }),
  );
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const streams = o.streams ?? 50;
  const json = o.json ?? 200;
  const timeoutMs = o.timeoutMs ?? 60_000;
  if (!o.tokens.length) throw new Error('runLoad needs at least one token');
  const failures: string[] = [];
  const fail = (line: string) => failures.length < 20 && failures.push(line);
  const auth = (i: number) => ({ authorization: `Bearer ${o.tokens[i % o.tokens.length]}` });

  // Setup (not measured): a chat per stream, so replies do not queue behind one another's history.
  const chats = await Promise.all(
    Array.from({ length: Math.max(streams, 1) }, async (_, i) => {
      const res = await fetch(`${o.url}/chat`, {
        method: 'POST',
        headers: { ...auth(i), 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'text', name: `load ${i}` }),
      });
      if (res.status !== 201) throw new Error(`setup: POST /chat answered ${res.status}`);
      return ((await res.json()) as { data: { id: string } }).data.id;
    }),
  );

  const streamMs: number[] = [];
  const firstEventMs: number[] = [];
  let streamErrors = 0;
  async function oneStream(i: number) {
    const started = performance.now();
    try {
      const res = await fetch(`${o.url}/message/logged-in`, {
        method: 'POST',
        headers: { ...auth(i), 'content-type': 'application/json' },
        body: JSON.stringify({
          chatId: chats[i],
          prompt: `Load test prompt number ${i}: say something.`,
          stream: true,
        }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (res.status !== 200 || !res.headers.get('content-type')?.startsWith('text/event-stream')) {
        throw new Error(`status ${res.status} ${(await res.text()).slice(0, 120)}`);
      }
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      let first = 0;
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        text += decoder.decode(r.value, { stream: true });
        if (!first && text.includes('data: ')) first = performance.now();
      }
      if (!text.endsWith('data: [DONE]\n\n'))
        throw new Error(`the stream did not end with [DONE]: …${text.slice(-80)}`);
      if (/^event: error$/m.test(text)) throw new Error(`event: error in the stream: ${text.slice(0, 200)}`);
      streamMs.push(performance.now() - started);
      firstEventMs.push(first - started);
    } catch (err) {
      streamErrors++;
      fail(`stream ${i} after ${Math.round(performance.now() - started)} ms: ${describeError(err)}`);
    }
  }

  // What the mix orders: a product made by the first user, the one admin (ADMIN_EMAILS).
  const product = await fetch(`${o.url}/products`, {
    method: 'POST',
    headers: { ...auth(0), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Load lamp', priceCents: 1250, currency: 'EUR' }),
  });
  if (product.status !== 201)
    throw new Error(`setup: POST /products answered ${product.status}: the first load user must be in ADMIN_EMAILS`);
  const productId = ((await product.json()) as { id: string }).id;

  // The JSON mix: what a client does besides chatting.
  const mix: { name: string; method: string; path: (i: number) => string; body?: object }[] = [
    { name: 'GET /chat', method: 'GET', path: () => '/chat?limit=20' },
    { name: 'GET /orders', method: 'GET', path: () => '/orders?limit=20' },
    { name: 'GET /products', method: 'GET', path: () => '/products?limit=20' },
    { name: 'POST /orders', method: 'POST', path: () => '/orders', body: { items: [{ productId, quantity: 1 }] } },
    {
      name: 'GET /chat/{id}/messages',
      method: 'GET',
      path: (i) => `/chat/${chats[i % chats.length]}/messages?limit=20`,
    },
  ];
  const jsonMs: number[] = [];
  const byRoute: Record<string, number> = {};
  let jsonErrors = 0;
  async function oneJson(i: number) {
    const m = mix[i % mix.length]!;
    const started = performance.now();
    try {
      const res = await fetch(`${o.url}${m.path(i)}`, {
        method: m.method,
        headers: { ...auth(i), ...(m.body && { 'content-type': 'application/json' }) },
        ...(m.body && { body: JSON.stringify(m.body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      if (res.status < 200 || res.status > 299) throw new Error(`status ${res.status} ${text.slice(0, 120)}`);
      JSON.parse(text);
      jsonMs.push(performance.now() - started);
      byRoute[m.name] = (byRoute[m.name] ?? 0) + 1;
    } catch (err) {
      jsonErrors++;
      fail(`${m.name} #${i} after ${Math.round(performance.now() - started)} ms: ${describeError(err)}`);
    }
  }

  const wallStart = performance.now();
  const runStreams = () => Promise.all(Array.from({ length: streams }, (_, i) => oneStream(i)));
  const runJson = () => Promise.all(Array.from({ length: json }, (_, i) => oneJson(i)));
  if (o.together ?? true) await Promise.all([runStreams(), runJson()]);
  else {
    await runStreams();
    await runJson();
  }
  const wallMs = Math.round(performance.now() - wallStart);

  const s = figures(streamMs, streamErrors);
  const sortedFirst = [...firstEventMs].sort((a, b) => a - b);
  return {
    streams: { ...s, firstEventP50: percentile(sortedFirst, 50), firstEventP99: percentile(sortedFirst, 99) },
    json: { ...figures(jsonMs, jsonErrors), byRoute },
    wallMs,
    failures,
  };
}

export function formatLoad(r: LoadResult): string {
  const line = (name: string, l: Latency) =>
    `${name}: ${l.count} requests, ${l.errors} errors; p50 ${l.p50} ms, p90 ${l.p90} ms, p99 ${l.p99} ms, max ${l.max} ms`;
  return [
    `Load (${r.wallMs} ms wall):`,
    `  ${line('streamed replies', r.streams)}; first event p50 ${r.streams.firstEventP50} ms, p99 ${r.streams.firstEventP99} ms`,
    `  ${line('JSON requests', r.json)}`,
    ...r.failures.map((f) => `  failed: ${f}`),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const url = process.env.LOAD_URL ?? 'http://localhost:3000/api/v1';
  const dataDir = process.env.LOAD_DATA_DIR ?? '.data';
  const tokens = await signInLocal(url, dataDir, Number(process.env.LOAD_USERS ?? 5));
  const result = await runLoad({
    url,
    tokens,
    streams: Number(process.env.LOAD_STREAMS ?? 50),
    json: Number(process.env.LOAD_JSON ?? 200),
  });
  console.log(formatLoad(result));
  console.log(JSON.stringify(result));
  process.exitCode = result.streams.errors + result.json.errors ? 1 : 0;
}
