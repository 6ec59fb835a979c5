import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { classifyAddress, isAllowedAddress } from './address-class.ts';
import { PermanentFailure, RetryableFailure, type DownloadCause } from '../files/failures.ts';
import { asError } from '../errors.ts';

// Fetching a URL a user gave us without letting them point the service at itself or its network
// (docs/DECISIONS.md, PDF ingestion, SSRF): http(s) only, no credentials, every host resolved and
// every address checked, redirects followed by hand (at most `maxRedirects`, each target checked
// again), and the connection made to the address that was checked (the socket's DNS lookup is
// pinned), so a DNS answer that changes between check and connect cannot smuggle a private address
// in. Bodies are counted while they stream and cut at `maxBytes` whatever Content-Length said; one
// deadline covers the whole exchange, and a body slower than a floor over a window is cut early.

export interface FetchPolicy {
  allowLoopback: boolean;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  /**
   * Fair downloads: a body arriving slower than this (bytes per second, over each whole window)
   * is cut, so slow-drip servers cannot hold the pipeline's download slots. 0 or unset: no floor.
   */
  minBytesPerSecond?: number;
  slowWindowMs?: number;
  /** DNS resolution (tests may replace it); all addresses of a host. */
  resolve?: (hostname: string) => Promise<{ address: string; family: number }[]>;
}

/** Redirects followed at most. */
export const MAX_REDIRECTS = 3;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = 'chat-orders-pdf-service/1 (+pdf ingestion)';

/** A download that cannot succeed as asked, with its cause class (see DownloadCause). */
const refused = (message: string, downloadCause: DownloadCause) =>
  new PermanentFailure('DOWNLOAD_FAILED', message, { downloadCause });
/** The URL itself is not allowed (SSRF guard): the caller's input (URL_REFUSED). */
const notAllowed = (message: string) => new PermanentFailure('URL_REFUSED', message);

/** Parses and checks the form of a PDF URL (no network). Throws PermanentFailure. */
export function parsePdfUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw notAllowed('The URL is not valid');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw notAllowed('Only http and https URLs are allowed');
  if (url.username || url.password) throw notAllowed('URLs with credentials are not allowed');
  if (!url.hostname) throw notAllowed('The URL has no host');
  return url;
}

const defaultResolve = (hostname: string) => dnsLookup(hostname, { all: true, verbatim: true });

/** Resolves the URL's host and checks every address; the address to connect to. */
export async function resolveAllowed(url: URL, policy: FetchPolicy): Promise<{ address: string; family: 4 | 6 }> {
  const host = url.hostname;
  const literal = host.startsWith('[') ? host.slice(1, -1) : host;
  let addresses: { address: string; family: number }[];
  const literalClass = classifyAddress(literal);
  if (literalClass !== 'invalid') {
    addresses = [{ address: literal, family: literal.includes(':') ? 6 : 4 }];
  } else {
    try {
      addresses = await (policy.resolve ?? defaultResolve)(host);
    } catch {
      throw refused(`The host ${host} could not be resolved`, 'NO_HTTP_ANSWER');
    }
    if (!addresses.length) throw refused(`The host ${host} could not be resolved`, 'NO_HTTP_ANSWER');
  }
  for (const a of addresses) {
    const cls = classifyAddress(a.address);
    if (!isAllowedAddress(cls, policy.allowLoopback)) {
      throw notAllowed(`The URL points to a ${cls === 'invalid' ? 'non-public' : cls} address, which is not allowed`);
    }
  }
  const chosen = addresses[0]!;
  return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}

interface Exchange {
  response: IncomingMessage;
  url: URL;
}

/** One request to an already-checked address. */
function send(
  url: URL,
  method: string,
  pinned: { address: string; family: 4 | 6 },
  headers: Record<string, string>,
  signal: AbortSignal,
) {
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = mod.request(
      url,
      { method, headers: { 'user-agent': USER_AGENT, ...headers }, lookup, agent: false, signal },
      resolve,
    );
    req.on('error', reject);
    req.end();
  });
}

/** A request that follows up to `maxRedirects` redirects, checking each target first. */
async function exchange(
  start: URL,
  method: string,
  headers: Record<string, string>,
  policy: FetchPolicy,
  signal: AbortSignal,
): Promise<Exchange> {
  let url = start;
  for (let hop = 0; ; hop++) {
    const pinned = await resolveAllowed(url, policy);
    let response: IncomingMessage;
    try {
      response = await send(url, method, pinned, headers, signal);
    } catch (err) {
      // Before any HTTP answer, every failure is one class (no port scanner: see DownloadCause).
      if (signal.aborted)
        throw new RetryableFailure('DOWNLOAD_FAILED', `No answer within ${policy.timeoutMs} ms`, {
          downloadCause: 'NO_HTTP_ANSWER',
        });
      throw new RetryableFailure('DOWNLOAD_FAILED', `Could not connect to ${url.host}: ${asError(err).message}`, {
        cause: err,
        downloadCause: 'NO_HTTP_ANSWER',
      });
    }
    const status = response.statusCode ?? 0;
    if (!REDIRECTS.has(status)) return { response, url };
    response.resume();
    response.destroy();
    const location = response.headers.location;
    if (!location) throw refused(`The server answered ${status} without a Location`, 'REDIRECTS');
    if (hop >= policy.maxRedirects) throw refused(`Too many redirects (more than ${policy.maxRedirects})`, 'REDIRECTS');
    url = parsePdfUrl(new URL(location, url).href);
  }
}

function statusFailure(status: number, what: string) {
  const message = `${what}: the server answered ${status}`;
  // 4xx will not change on retry (except throttling and timeouts); 5xx may.
  const Failure = status >= 500 || status === 429 || status === 408 ? RetryableFailure : PermanentFailure;
  return new Failure('DOWNLOAD_FAILED', message, { httpStatus: status, downloadCause: 'HTTP_STATUS' });
}

const tooLarge = (maxBytes: number) =>
  new PermanentFailure('TOO_LARGE', `The PDF is larger than the ${maxBytes}-byte limit`);

/**
 * The size the server announces, without downloading the body: HEAD, or when HEAD is refused
 * (a presigned GET URL rejects HEAD on S3), a one-byte ranged GET. Undefined when unknown.
 * Throws TOO_LARGE when the announced size exceeds the limit.
 */
export async function probeSize(raw: string, policy: FetchPolicy): Promise<number | undefined> {
  const url = parsePdfUrl(raw);
  const signal = AbortSignal.timeout(policy.timeoutMs);
  let { response } = await exchange(url, 'HEAD', {}, policy, signal);
  response.resume();
  let size: number | undefined;
  const status = response.statusCode ?? 0;
  if (status === 403 || status === 405 || status === 501) {
    ({ response } = await exchange(url, 'GET', { range: 'bytes=0-0' }, policy, signal));
    response.destroy();
    const ranged = response.statusCode ?? 0;
    if (ranged === 206) size = Number(/\/(\d+)\s*$/.exec(String(response.headers['content-range'] ?? ''))?.[1] ?? NaN);
    else if (ranged >= 200 && ranged < 300) size = Number(response.headers['content-length'] ?? NaN);
    else throw statusFailure(ranged, 'The size check failed');
  } else if (status >= 200 && status < 300) {
    size = Number(response.headers['content-length'] ?? NaN);
  } else {
    throw statusFailure(status, 'The size check failed');
  }
  if (!Number.isFinite(size)) return undefined;
  if (size! > policy.maxBytes) throw tooLarge(policy.maxBytes);
  return size;
}

/** Downloads the body, at most `maxBytes` of it, into one buffer (small bodies; pdf-fetch streams). */
export async function download(raw: string, policy: FetchPolicy): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of downloadStream(raw, policy)) {
    chunks.push(chunk);
    total += chunk.length;
  }
  return Buffer.concat(chunks, total);
}

/**
 * The body as it arrives, at most `maxBytes` of it, with every guard of `download`. The next chunk
 * is read only once the caller asks for it, so memory is what the caller keeps (docs/DECISIONS.md,
 * Large PDFs: nothing holds the whole file). Time the caller spends between chunks (storing a
 * part) is not held against the server by the slow-body floor; the overall deadline covers it.
 */
export async function* downloadStream(raw: string, policy: FetchPolicy): AsyncGenerator<Buffer, void, undefined> {
  const url = parsePdfUrl(raw);
  const signal = AbortSignal.timeout(policy.timeoutMs);
  const { response } = await exchange(url, 'GET', { accept: 'application/pdf, */*;q=0.5' }, policy, signal);
  const status = response.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    response.destroy();
    throw statusFailure(status, 'The download failed');
  }
  const declared = Number(response.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > policy.maxBytes) {
    response.destroy();
    throw tooLarge(policy.maxBytes);
  }
  let total = 0;
  let tooSlow = false;
  let floorTimer: NodeJS.Timeout | undefined;
  // Time spent with the caller (suspended at `yield`): finished stretches, and the current one.
  let callerMs = 0;
  let callerSince: number | undefined;
  const callerTime = (now: number) => callerMs + (callerSince === undefined ? 0 : now - callerSince);
  const windowMs = policy.slowWindowMs ?? 5_000;
  if (policy.minBytesPerSecond) {
    const minBytesPerSecond = policy.minBytesPerSecond;
    let atWindowStart = 0;
    let callerAtWindowStart = 0;
    floorTimer = setInterval(() => {
      const now = Date.now();
      const serverMs = windowMs - (callerTime(now) - callerAtWindowStart);
      if (serverMs > 0 && total - atWindowStart < (minBytesPerSecond * serverMs) / 1000) {
        tooSlow = true;
        response.destroy();
      }
      atWindowStart = total;
      callerAtWindowStart = callerTime(now);
    }, windowMs);
  }
  const iterator = (response as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  try {
    for (;;) {
      let next: IteratorResult<Buffer>;
      try {
        next = await iterator.next();
      } catch (err) {
        response.destroy();
        // Slow is the server's doing and would be as slow again: not retried.
        if (tooSlow) throw refused('The download was too slow', 'TOO_SLOW');
        if (signal.aborted)
          throw new RetryableFailure('DOWNLOAD_FAILED', `The download took longer than ${policy.timeoutMs} ms`, {
            downloadCause: 'TOO_SLOW',
          });
        throw new RetryableFailure('DOWNLOAD_FAILED', `The download was interrupted: ${asError(err).message}`, {
          cause: err,
          downloadCause: 'INTERRUPTED',
        });
      }
      if (next.done) break;
      total += next.value.length;
      if (total > policy.maxBytes) {
        response.destroy();
        throw tooLarge(policy.maxBytes);
      }
      callerSince = Date.now();
      try {
        yield next.value;
      } finally {
        callerMs += Date.now() - callerSince;
        callerSince = undefined;
      }
    }
  } finally {
    clearInterval(floorTimer);
    // The caller stopped early (a failure of its own): the connection goes.
    if (!response.complete) response.destroy();
  }
  if (tooSlow) throw refused('The download was too slow', 'TOO_SLOW');
  if (!response.complete)
    throw new RetryableFailure('DOWNLOAD_FAILED', 'The download ended early', { downloadCause: 'INTERRUPTED' });
}
