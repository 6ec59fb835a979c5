import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { InvalidInputError } from '../errors.ts';
import { PermanentFailure } from '../files/failures.ts';
import { parsePdfUrl, resolveAllowed, type FetchPolicy } from '../net/guarded-fetch.ts';

// Sending a delivery to a URL a user gave us, under the download guard of PDF URLs
// (shared/net/guarded-fetch.ts): http(s) only, no credentials, every address of the host checked
// (no private, link-local, loopback or metadata address unless WEBHOOK_ALLOW_LOOPBACK lets
// loopback through for the local runtime), the connection pinned to the address checked (no DNS
// rebinding between check and connect), redirects not followed (a 3xx is a failed attempt), one
// deadline for the whole exchange, and at most RESPONSE_BYTES of the answer read.

export interface ReceiverPolicy {
  allowLoopback: boolean;
  timeoutMs: number;
  /** DNS resolution (tests may replace it). */
  resolve?: FetchPolicy['resolve'];
}

const RESPONSE_BYTES = 4 * 1024;
const USER_AGENT = 'chat-orders-pdf-service/1 (+webhooks)';

const guardPolicy = (policy: ReceiverPolicy): FetchPolicy => ({
  allowLoopback: policy.allowLoopback,
  maxBytes: RESPONSE_BYTES,
  timeoutMs: policy.timeoutMs,
  maxRedirects: 0,
  ...(policy.resolve && { resolve: policy.resolve }),
});

/** The guard's verdict on a URL: the URL and the address to connect to, or the reason it is refused. */
async function checked(raw: string, policy: ReceiverPolicy) {
  const url = parsePdfUrl(raw);
  return { url, pinned: await resolveAllowed(url, guardPolicy(policy)) };
}

/** At creation: the URL passes the guard, or InvalidInputError (400) saying why. */
export async function checkReceiverUrl(raw: string, policy: ReceiverPolicy): Promise<void> {
  try {
    await checked(raw, policy);
  } catch (err) {
    if (err instanceof PermanentFailure)
      throw new InvalidInputError(
        'The webhook URL is not allowed',
        [{ path: 'body.url', message: err.message }],
        'URL_REFUSED',
      );
    throw err;
  }
}

export type AttemptOutcome = { ok: true; statusCode: number } | { ok: false; statusCode?: number; error: string };

/** One attempt: POST the body with the headers; 2xx is delivered, anything else (a refusal of the guard included) failed. */
export async function postToReceiver(
  raw: string,
  body: string,
  headers: Record<string, string>,
  policy: ReceiverPolicy,
): Promise<AttemptOutcome> {
  let target: Awaited<ReturnType<typeof checked>>;
  try {
    target = await checked(raw, policy);
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : 'The URL is not allowed' };
  }
  const { url, pinned } = target;
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
  const signal = AbortSignal.timeout(policy.timeoutMs);
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise<AttemptOutcome>((resolve) => {
    const req = mod.request(
      url,
      {
        method: 'POST',
        headers: {
          'user-agent': USER_AGENT,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          ...headers,
        },
        lookup,
        agent: false,
        signal,
      },
      (res) => {
        const statusCode = res.statusCode ?? 0;
        // The answer's body is not needed: a little is read (so the receiver is not cut off mid-write), then dropped.
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > RESPONSE_BYTES) res.destroy();
        });
        res.on('close', () =>
          resolve(
            statusCode >= 200 && statusCode < 300
              ? { ok: true, statusCode }
              : {
                  ok: false,
                  statusCode,
                  error:
                    statusCode >= 300 && statusCode < 400 ? 'Redirects are not followed' : `Answered ${statusCode}`,
                },
          ),
        );
        res.on('error', () => undefined);
      },
    );
    req.on('error', (err) =>
      resolve({
        ok: false,
        error: signal.aborted ? `No answer within ${policy.timeoutMs} ms` : `Could not connect: ${err.message}`,
      }),
    );
    req.end(body);
  });
}
