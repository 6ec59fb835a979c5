import http from 'node:http';

// One HTTP request sent byte for byte: the path as given (no URL normalisation, so `..`,
// `%2F` and `%2e%2e` reach the server unchanged), any body bytes, any headers, and a hard
// deadline (a hang fails the test instead of stalling it). For hostile-input tests; ordinary
// tests use `app.request`.

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: any;
  ms: number;
}

export interface RawRequest {
  method: string;
  /** Absolute URL of the service's base (e.g. http://localhost:1234/api/v1). */
  base: string;
  /** Appended to the base path verbatim. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Gives up after this long (a minute by default: generous for a loaded machine). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;

export class RequestTimeout extends Error {
  override name = 'RequestTimeout';
}

export function rawRequest(r: RawRequest): Promise<RawResponse> {
  const base = new URL(r.base);
  const started = performance.now();
  const body = r.body === undefined ? undefined : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body, 'utf8');
  return new Promise<RawResponse>((resolve, reject) => {
    const req = http.request(
      {
        host: base.hostname === 'localhost' ? '127.0.0.1' : base.hostname,
        port: base.port,
        method: r.method,
        path: base.pathname.replace(/\/$/, '') + r.path,
        headers: { ...(body && { 'content-length': String(body.length) }), ...r.headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, ms: performance.now() - started });
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy(
        new RequestTimeout(
          `${r.method} ${r.path.slice(0, 200)} did not answer within ${r.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms`,
        ),
      );
    }, r.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    if (body) req.write(body);
    req.end();
  });
}
