import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BucketCorsRule } from '../bucket.ts';

// The local S3's CORS, evaluated as S3 evaluates a bucket's CORS rule: a preflight (OPTIONS with
// Origin and Access-Control-Request-Method) is answered here, 200 with the rule's headers or
// 403 as S3 refuses it; a request from an allowed origin with an allowed method gets the
// headers added to fauxqs's answer. (fauxqs implements no bucket CORS.)

/** S3 patterns allow one `*`, matching any run of characters. */
function glob(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    'i',
  );
}

/** An S3 error answer (its XML body). */
export function s3Error(res: ServerResponse, status: number, code: string, message: string): void {
  const id = randomBytes(8).toString('hex').toUpperCase();
  res.writeHead(status, { 'content-type': 'application/xml', 'x-amz-request-id': id });
  res.end(
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>${id}</RequestId></Error>`,
  );
}

const NOT_ALLOWED =
  "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec.";

function allowOrigin(rule: BucketCorsRule, origin: string): string | undefined {
  const pattern = rule.allowedOrigins.find((o) => glob(o).test(origin));
  if (pattern === undefined) return undefined;
  return pattern === '*' ? '*' : origin;
}

function corsHeaders(rule: BucketCorsRule, allowedOrigin: string): Record<string, string> {
  return {
    'access-control-allow-origin': allowedOrigin,
    'access-control-allow-methods': rule.allowedMethods.join(', '),
    ...(rule.exposedHeaders.length && { 'access-control-expose-headers': rule.exposedHeaders.join(', ') }),
    'access-control-max-age': String(rule.maxAge),
    ...(allowedOrigin !== '*' && { 'access-control-allow-credentials': 'true' }),
    vary: 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method',
  };
}

/**
 * Applies the rule to one request: true when the request was a preflight and has been answered;
 * false when it goes on to the emulator (with CORS headers set if the browser may read it).
 */
export function applyBucketCors(rule: BucketCorsRule, req: IncomingMessage, res: ServerResponse): boolean {
  const origin = req.headers.origin;
  if (req.method === 'OPTIONS') {
    const method = req.headers['access-control-request-method'];
    if (!origin) {
      s3Error(res, 400, 'BadRequest', 'Insufficient information. Origin request header needed.');
      return true;
    }
    if (!method) {
      s3Error(res, 400, 'BadRequest', 'Invalid Access-Control-Request-Method header.');
      return true;
    }
    const requested = (req.headers['access-control-request-headers'] ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean);
    const allowedOrigin = allowOrigin(rule, origin);
    const methodAllowed = (rule.allowedMethods as string[]).includes(method.toUpperCase());
    const headersAllowed = requested.every((h) => rule.allowedHeaders.some((pattern) => glob(pattern).test(h)));
    if (allowedOrigin === undefined || !methodAllowed || !headersAllowed) {
      s3Error(res, 403, 'AccessForbidden', NOT_ALLOWED);
      return true;
    }
    res.writeHead(200, {
      ...corsHeaders(rule, allowedOrigin),
      ...(requested.length && { 'access-control-allow-headers': requested.join(', ') }),
      'content-length': '0',
    });
    res.end();
    return true;
  }
  if (origin && (rule.allowedMethods as string[]).includes(req.method ?? '')) {
    const allowedOrigin = allowOrigin(rule, origin);
    if (allowedOrigin !== undefined)
      for (const [name, value] of Object.entries(corsHeaders(rule, allowedOrigin))) res.setHeader(name, value);
  }
  return false;
}
