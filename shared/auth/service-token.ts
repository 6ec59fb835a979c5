import '../config/auth.ts';
import { SignJWT, decodeJwt, decodeProtectedHeader, jwtVerify, type CryptoKey } from 'jose';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { secretsClient } from '../clients.ts';
import type { Clock } from '../clock.ts';
import { ConfigError, type Config } from '../config.ts';
import { UnauthenticatedError } from '../errors.ts';

// The service's own access token: HS256 only (pinned; `alg: none` and every other algorithm are
// refused), checked issuer and audience, `sub` = user id, 30-day expiry.

const SERVICE_JWT_ALGORITHM = 'HS256';
const MIN_SECRET_LENGTH = 32;

export type Role = 'user' | 'admin';

export interface ServiceTokenClaims {
  userId: string;
  role: Role;
}

/** Where the signing secret comes from, and the claims every token carries. */
interface ServiceTokenSettings {
  /** The secret itself, or a reader of it (Secrets Manager when deployed), read once. */
  secret: string | (() => Promise<string | undefined>);
  issuer: string;
  audience: string;
  ttlSeconds: number;
}

export const serviceTokenSettings = (config: Config): ServiceTokenSettings => ({
  secret: config.SERVICE_JWT_SECRET ?? (async () => readSecret(config.SERVICE_JWT_SECRET_ARN)),
  issuer: config.SERVICE_JWT_ISSUER,
  audience: config.SERVICE_JWT_AUDIENCE,
  ttlSeconds: config.SERVICE_JWT_TTL_SECONDS,
});

async function readSecret(arn: string | undefined): Promise<string | undefined> {
  if (!arn) return undefined;
  return (await secretsClient().send(new GetSecretValueCommand({ SecretId: arn }))).SecretString;
}

interface VerifiedToken extends ServiceTokenClaims {
  notBefore: number;
  expiresAt: number;
}

/** Issues and verifies service JWTs; one per function, composed with its settings and clock. */
export class ServiceTokens {
  private key: Promise<CryptoKey> | undefined;
  /**
   * Tokens this instance has verified, by their exact bytes: a signature checked once stays
   * valid, so a warm function skips the HMAC on the next request with the same token. Time-bound
   * claims (exp, nbf) are still checked on every request. Bounded; oldest entries go first.
   */
  private readonly verified = new Map<string, VerifiedToken>();

  constructor(
    private readonly settings: ServiceTokenSettings,
    private readonly clock: Clock,
  ) {}

  /**
   * The signing key of this cold start: the secret, read once (from Secrets Manager when
   * deployed) and imported once (a raw secret would be re-imported on every sign and verify).
   */
  private signingKey(): Promise<CryptoKey> {
    this.key ??= (async () => {
      const { secret: source } = this.settings;
      const secret = typeof source === 'string' ? source : await source();
      if (!secret) throw new ConfigError('SERVICE_JWT_SECRET or SERVICE_JWT_SECRET_ARN must be set');
      if (secret.length < MIN_SECRET_LENGTH) {
        throw new ConfigError(`The service JWT secret must be at least ${MIN_SECRET_LENGTH} characters`);
      }
      const raw = new TextEncoder().encode(secret);
      return crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    })();
    // A failed read (throttling, a network blip) must not poison every later invocation.
    this.key.catch(() => (this.key = undefined));
    return this.key;
  }

  private nowSeconds(): number {
    return Math.floor(this.clock().getTime() / 1000);
  }

  async issue(claims: ServiceTokenClaims): Promise<string> {
    const now = this.nowSeconds();
    return new SignJWT({ role: claims.role })
      .setProtectedHeader({ alg: SERVICE_JWT_ALGORITHM, typ: 'JWT' })
      .setSubject(claims.userId)
      .setIssuer(this.settings.issuer)
      .setAudience(this.settings.audience)
      .setIssuedAt(now)
      .setExpirationTime(now + this.settings.ttlSeconds)
      .sign(await this.signingKey());
  }

  async verify(token: string): Promise<ServiceTokenClaims> {
    const now = this.nowSeconds();
    const known = this.verified.get(token);
    if (known) {
      if (now >= known.expiresAt || now < known.notBefore) {
        this.verified.delete(token);
        throw new UnauthenticatedError('Invalid or expired token');
      }
      return { userId: known.userId, role: known.role };
    }
    const key = await this.signingKey();
    try {
      const { payload } = await jwtVerify(token, key, {
        algorithms: [SERVICE_JWT_ALGORITHM],
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        requiredClaims: ['sub', 'exp', 'iat'],
        currentDate: this.clock(),
      });
      const claims: VerifiedToken = {
        userId: payload.sub!,
        role: payload.role === 'admin' ? 'admin' : 'user',
        notBefore: payload.nbf ?? 0,
        expiresAt: payload.exp!,
      };
      if (this.verified.size >= VERIFIED_MAX) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, claims);
      return { userId: claims.userId, role: claims.role };
    } catch {
      // jose says why (expired, bad signature, claim mismatch); the client only learns "invalid",
      // unless the token is plainly another issuer's (what it says of itself, unverified): then
      // it is the identity provider's ID token sent where the service's token belongs.
      if (this.isForeignToken(token)) throw new UnauthenticatedError(NOT_A_SERVICE_TOKEN);
      throw new UnauthenticatedError('Invalid or expired token');
    }
  }

  /** Whether a token is signed another way by another issuer (its header and claims read without trusting them). */
  private isForeignToken(token: string): boolean {
    try {
      const { alg } = decodeProtectedHeader(token);
      const { iss } = decodeJwt(token);
      return alg !== SERVICE_JWT_ALGORITHM && typeof iss === 'string' && iss !== this.settings.issuer;
    } catch {
      return false;
    }
  }
}

const NOT_A_SERVICE_TOKEN =
  'Not a service token: this looks like an identity-provider ID token. Exchange it at POST /auth ' +
  '(Authorization: Bearer <ID token>) and send the data.token that returns';

const VERIFIED_MAX = 1_000;

/** The token of an `Authorization: Bearer <token>` header, or UnauthenticatedError. */
export function bearerToken(headers: Record<string, string | undefined>): string {
  const value = headers.authorization;
  if (!value) throw new UnauthenticatedError('Missing Authorization header');
  const match = /^Bearer +([A-Za-z0-9\-_.~+/]+=*)\s*$/i.exec(value);
  if (!match) throw new UnauthenticatedError('Authorization header must be "Bearer <token>"');
  return match[1]!;
}
