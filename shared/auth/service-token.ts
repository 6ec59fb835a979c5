import { SignJWT, jwtVerify, type CryptoKey } from 'jose';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { config, ConfigError } from '../config.ts';
import { secretsClient } from '../clients.ts';
import { UnauthenticatedError } from '../errors.ts';

// The service's own access token: HS256 only (pinned; `alg: none` and every other algorithm are
// refused), checked issuer and audience, `sub` = user id, 30-day expiry.

export const SERVICE_JWT_ALGORITHM = 'HS256';
export const MIN_SECRET_LENGTH = 32;

export type Role = 'user' | 'admin';

export interface ServiceTokenClaims {
  userId: string;
  role: Role;
}

let keyPromise: Promise<CryptoKey> | undefined;

/**
 * The signing key of this cold start: from SERVICE_JWT_SECRET, else read once from Secrets
 * Manager; imported once (a raw secret would be re-imported on every sign and verify).
 */
function signingKey(): Promise<CryptoKey> {
  keyPromise ??= (async () => {
    const { SERVICE_JWT_SECRET, SERVICE_JWT_SECRET_ARN } = config();
    let secret = SERVICE_JWT_SECRET;
    if (!secret && SERVICE_JWT_SECRET_ARN) {
      const out = await secretsClient().send(new GetSecretValueCommand({ SecretId: SERVICE_JWT_SECRET_ARN }));
      secret = out.SecretString;
    }
    if (!secret) throw new ConfigError('SERVICE_JWT_SECRET or SERVICE_JWT_SECRET_ARN must be set');
    if (secret.length < MIN_SECRET_LENGTH) {
      throw new ConfigError(`The service JWT secret must be at least ${MIN_SECRET_LENGTH} characters`);
    }
    const raw = new TextEncoder().encode(secret);
    return crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
  })();
  // A failed read (throttling, a network blip) must not poison every later invocation.
  keyPromise.catch(() => (keyPromise = undefined));
  return keyPromise;
}

export async function issueServiceToken(claims: ServiceTokenClaims): Promise<string> {
  const { SERVICE_JWT_ISSUER, SERVICE_JWT_AUDIENCE, SERVICE_JWT_TTL_SECONDS } = config();
  return new SignJWT({ role: claims.role })
    .setProtectedHeader({ alg: SERVICE_JWT_ALGORITHM, typ: 'JWT' })
    .setSubject(claims.userId)
    .setIssuer(SERVICE_JWT_ISSUER)
    .setAudience(SERVICE_JWT_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + SERVICE_JWT_TTL_SECONDS)
    .sign(await signingKey());
}

interface VerifiedToken extends ServiceTokenClaims {
  notBefore: number;
  expiresAt: number;
}

/**
 * Tokens this instance has verified, by their exact bytes: a signature checked once stays
 * valid, so a warm function skips the HMAC on the next request with the same token. Time-bound
 * claims (exp, nbf) are still checked on every request. Bounded; oldest entries go first.
 */
const verified = new Map<string, VerifiedToken>();
const VERIFIED_MAX = 1_000;

export async function verifyServiceToken(token: string): Promise<ServiceTokenClaims> {
  const now = Math.floor(Date.now() / 1000);
  const known = verified.get(token);
  if (known) {
    if (now >= known.expiresAt || now < known.notBefore) {
      verified.delete(token);
      throw new UnauthenticatedError('Invalid or expired token');
    }
    return { userId: known.userId, role: known.role };
  }
  const { SERVICE_JWT_ISSUER, SERVICE_JWT_AUDIENCE } = config();
  const key = await signingKey();
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: [SERVICE_JWT_ALGORITHM],
      issuer: SERVICE_JWT_ISSUER,
      audience: SERVICE_JWT_AUDIENCE,
      requiredClaims: ['sub', 'exp', 'iat'],
    });
    const claims: VerifiedToken = {
      userId: payload.sub!,
      role: payload.role === 'admin' ? 'admin' : 'user',
      notBefore: payload.nbf ?? 0,
      expiresAt: payload.exp!,
    };
    if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value!);
    verified.set(token, claims);
    return { userId: claims.userId, role: claims.role };
  } catch {
    // jose says why (expired, bad signature, claim mismatch); the client only learns "invalid".
    throw new UnauthenticatedError('Invalid or expired token');
  }
}

/** The token of an `Authorization: Bearer <token>` header, or a 401. */
export function bearerToken(headers: Record<string, string | undefined>): string {
  const value = headers.authorization;
  if (!value) throw new UnauthenticatedError('Missing Authorization header');
  const match = /^Bearer +([A-Za-z0-9\-_.~+/]+=*)\s*$/i.exec(value);
  if (!match) throw new UnauthenticatedError('Authorization header must be "Bearer <token>"');
  return match[1]!;
}
