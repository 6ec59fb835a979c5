import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { createParser } from 'eventsource-parser';

// A lean HTTP client for the benchmarks: node:http over keep-alive connections (what an API
// client or API Gateway does), timed with performance.now(). Lighter than fetch, so less of
// the client's own work shows up in the latencies it measures.

export interface Timed {
  status: number;
  body: string;
  ms: number;
}

export interface RequestInit {
  method: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  agent?: http.Agent;
}

export function keepAliveAgent(maxSockets = 64): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
}

/** A call of the service's JSON API: the bearer token when there is one, the body as JSON when there is one. */
export function apiRequest(method: string, token?: string, body?: unknown, agent?: http.Agent): RequestInit {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return { method, headers, agent, body: body === undefined ? undefined : JSON.stringify(body) };
}

export async function request(url: string, init: RequestInit): Promise<Timed> {
  try {
    return await requestOnce(url, init);
  } catch (err) {
    // A kept-alive socket the server closed (its keepAliveTimeout) just as we reused it: Node's
    // documented race, not the service's failure. Send again on a fresh socket, once.
    if ((err as { reusedSocket?: boolean }).reusedSocket && (err as NodeJS.ErrnoException).code === 'ECONNRESET')
      return requestOnce(url, init);
    throw err;
  }
}

function requestOnce(url: string, init: RequestInit): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const headers = {
      ...init.headers,
      ...(init.body !== undefined && { 'content-length': String(Buffer.byteLength(init.body)) }),
    };
    const req = http.request(url, { method: init.method, headers, ...(init.agent && { agent: init.agent }) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          ms: performance.now() - started,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', (err) => reject(Object.assign(err, { reusedSocket: req.reusedSocket })));
    req.end(init.body);
  });
}

/**
 * Sends `total` requests with `concurrency` in flight at a time; every latency in ms. Any
 * status other than `expect` throws, so a benchmark never times error responses.
 */
export async function runLoad(
  total: number,
  concurrency: number,
  send: (i: number) => Promise<Timed>,
  expect: number,
): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const r = await send(i);
      if (r.status !== expect)
        throw new Error(`request ${i} answered ${r.status} (expected ${expect}): ${r.body.slice(0, 300)}`);
      latencies.push(r.ms);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  return latencies;
}

export interface SseTiming {
  status: number;
  /** performance.now() when the first event carrying data arrived. */
  firstDataAt?: number;
  events: { event?: string; data: string; at: number }[];
  body: string;
}

/** POSTs and reads a Server-Sent Events response, timing each event as it is parsed. */
export function postSse(
  url: string,
  headers: Record<string, string>,
  body: string,
  agent?: http.Agent,
): Promise<SseTiming> {
  return readSse('POST', url, { ...headers, 'content-type': 'application/json' }, body, agent);
}

/** GETs and reads a Server-Sent Events response (a resume), timing each event as it is parsed. */
export function getSse(url: string, headers: Record<string, string>, agent?: http.Agent): Promise<SseTiming> {
  return readSse('GET', url, headers, undefined, agent);
}

function readSse(
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  body: string | undefined,
  agent?: http.Agent,
): Promise<SseTiming> {
  return new Promise((resolve, reject) => {
    const out: SseTiming = { status: 0, events: [], body: '' };
    const parser = createParser({
      onEvent: (e) => {
        const at = performance.now();
        out.events.push({ ...(e.event && { event: e.event }), data: e.data, at });
        if (out.firstDataAt === undefined && e.data !== '') out.firstDataAt = at;
      },
    });
    const req = http.request(
      url,
      {
        method,
        headers: {
          ...headers,
          accept: 'text/event-stream',
          ...(body !== undefined && { 'content-length': String(Buffer.byteLength(body)) }),
        },
        ...(agent && { agent }),
      },
      (res) => {
        out.status = res.statusCode ?? 0;
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          out.body += text;
          parser.feed(text);
        });
        res.on('end', () => resolve(out));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
