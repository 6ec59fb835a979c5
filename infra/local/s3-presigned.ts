import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

// The local S3 checks a presigned URL as S3 does. fauxqs accepts any request, so a presigned PUT
// with more bytes than it declared, or another Content-Type than the one signed, succeeded
// locally and failed on S3. S3 verifies the URL's SigV4 signature over the request as it arrives:
// the values of the headers the URL signed (X-Amz-SignedHeaders: host, content-length,
// content-type) must be the ones the signer saw, and the URL must not have expired. The check
// recomputes that signature with the emulators' credentials; a URL signed with other keys (real
// ones exported in the shell) cannot be checked here and goes through as before.

interface S3Refusal {
  status: number;
  code: string;
  message: string;
}

const SIGNATURE_MISMATCH: S3Refusal = {
  status: 403,
  code: 'SignatureDoesNotMatch',
  message:
    'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
};

/** RFC 3986 encoding, as SigV4's canonical query string wants it. */
const uriEncode = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
const sha256 = (data: string) => createHash('sha256').update(data).digest('hex');

/** `20261124T235900Z` → epoch milliseconds. */
function amzDateMs(value: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : Number.NaN;
}

/**
 * What S3 would refuse a presigned request with, or undefined when it would accept it (or when
 * the request is not presigned with the given credentials, which only S3 itself can check).
 */
export function presignedRefusal(
  req: IncomingMessage,
  credentials: { accessKeyId: string; secretAccessKey: string },
  now = Date.now(),
): S3Refusal | undefined {
  const raw = req.url ?? '/';
  const queryAt = raw.indexOf('?');
  if (queryAt < 0) return undefined;
  const pairs = raw
    .slice(queryAt + 1)
    .split('&')
    .filter(Boolean)
    .map((p) => {
      const eq = p.indexOf('=');
      const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, '%20'));
      return eq < 0 ? [decode(p), ''] : [decode(p.slice(0, eq)), decode(p.slice(eq + 1))];
    }) as [string, string][];
  const param = (name: string) => pairs.find(([k]) => k === name)?.[1];
  const signature = param('X-Amz-Signature');
  const credential = param('X-Amz-Credential');
  if (param('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256' || !signature || !credential) return undefined;
  const [accessKeyId, ...scopeParts] = credential.split('/');
  if (accessKeyId !== credentials.accessKeyId) return undefined;

  const amzDate = param('X-Amz-Date') ?? '';
  const signedAt = amzDateMs(amzDate);
  const expires = Number(param('X-Amz-Expires'));
  if (!Number.isFinite(signedAt) || !Number.isFinite(expires)) return SIGNATURE_MISMATCH;
  if (now > signedAt + expires * 1000) return { status: 403, code: 'AccessDenied', message: 'Request has expired' };

  const signedHeaders = (param('X-Amz-SignedHeaders') ?? '').split(';').filter(Boolean).sort();
  const headerValue = (name: string) => {
    const value = req.headers[name];
    return (Array.isArray(value) ? value.join(',') : (value ?? '')).trim().replace(/\s+/g, ' ');
  };
  // A header that was signed and is absent (a chunked upload has no content-length) cannot match.
  if (signedHeaders.some((name) => req.headers[name] === undefined)) return SIGNATURE_MISMATCH;
  const canonicalRequest = [
    req.method ?? 'GET',
    raw.slice(0, queryAt),
    pairs
      .filter(([k]) => k !== 'X-Amz-Signature')
      .map(([k, v]) => `${uriEncode(k)}=${uriEncode(v)}`)
      .sort()
      .join('&'),
    signedHeaders.map((name) => `${name}:${headerValue(name)}\n`).join(''),
    signedHeaders.join(';'),
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const scope = scopeParts.join('/');
  const [day = '', region = '', service = ''] = scopeParts;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), region), service), 'aws4_request');
  const expected = hmac(key, stringToSign);
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected) ? undefined : SIGNATURE_MISMATCH;
}
