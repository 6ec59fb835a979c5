import '../config/auth.ts';
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../clock.ts';
import * as z from '../zod.ts';
import { ConfigError, type Config } from '../config.ts';
import { DependencyUnavailableError, UnauthenticatedError } from '../errors.ts';

// Verifies identity-provider ID tokens (POST /auth) against the provider's JWKS.

interface IdentityProviderSettings {
  preset: NonNullable<Config['IDP_PRESET']>;
  jwksUrl: string;
  issuer: string | string[];
  audience: string;
  jwksTimeoutMs: number;
}

/** Resolves the preset (Firebase, Google, Cognito, local) and explicit IDP_* overrides. */
export function identityProviderSettings(config: Config): IdentityProviderSettings {
  const preset =
    config.IDP_PRESET ??
    (config.FIREBASE_PROJECT_ID
      ? 'firebase'
      : config.COGNITO_USER_POOL_ID
        ? 'cognito'
        : config.GOOGLE_CLIENT_ID
          ? 'google'
          : 'custom');
  let defaults: Partial<IdentityProviderSettings> = {};
  switch (preset) {
    case 'firebase':
      if (!config.FIREBASE_PROJECT_ID) throw new ConfigError('FIREBASE_PROJECT_ID is required for IDP_PRESET=firebase');
      defaults = {
        jwksUrl: 'https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com',
        issuer: `https://securetoken.google.com/${config.FIREBASE_PROJECT_ID}`,
        audience: config.FIREBASE_PROJECT_ID,
      };
      break;
    case 'google':
      defaults = {
        jwksUrl: 'https://www.googleapis.com/oauth2/v3/certs',
        issuer: ['https://accounts.google.com', 'accounts.google.com'],
        audience: config.GOOGLE_CLIENT_ID,
      };
      break;
    case 'cognito': {
      const pool = config.COGNITO_USER_POOL_ID;
      if (!pool) throw new ConfigError('COGNITO_USER_POOL_ID is required for IDP_PRESET=cognito');
      const region = pool.split('_')[0];
      const issuer = `https://cognito-idp.${region}.amazonaws.com/${pool}`;
      defaults = { jwksUrl: `${issuer}/.well-known/jwks.json`, issuer, audience: config.COGNITO_CLIENT_ID };
      break;
    }
    default:
      break;
  }
  const settings = {
    preset,
    jwksUrl: config.IDP_JWKS_URL ?? defaults.jwksUrl,
    issuer: config.IDP_ISSUER ?? defaults.issuer,
    audience: config.IDP_AUDIENCE ?? defaults.audience,
    jwksTimeoutMs: config.IDP_JWKS_TIMEOUT_MS,
  };
  const missing = (['jwksUrl', 'issuer', 'audience'] as const)
    .filter((k) => !settings[k])
    .map((k) => ({ jwksUrl: 'IDP_JWKS_URL', issuer: 'IDP_ISSUER', audience: 'IDP_AUDIENCE' })[k]);
  if (missing.length) {
    throw new ConfigError(`Identity provider (${preset}) is missing: ${missing.join(', ')}`);
  }
  return settings as IdentityProviderSettings;
}

export interface IdentityClaims {
  /** The provider's user id: `user_id` (Firebase) or `sub`. */
  providerUserId: string;
  email: string;
  verified: boolean;
  name?: string;
  picture: string | null;
}

const claimsSchema = z.object({
  sub: z.string().check(z.minLength(1), z.maxLength(256)),
  user_id: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
  email: z.email({ error: 'The ID token carries no valid email' }).check(z.maxLength(320)),
  email_verified: z.optional(
    z.union([
      z.boolean(),
      z.pipe(
        z.enum(['true', 'false']),
        z.transform((v) => v === 'true'),
      ),
    ]),
  ),
  name: z.optional(z.string().check(z.maxLength(256))),
  picture: z.optional(z.unknown()),
});

// Only an http(s) picture is kept: a `javascript:` or `data:` URL would be handed to every
// client that renders the profile. Anything else is dropped, not a reason to refuse sign-in.
const pictureSchema = z.url({ protocol: /^https?$/ }).check(z.maxLength(2048));
const pictureOf = (value: unknown): string | null => {
  const parsed = pictureSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
};

/** Seconds an ID token's `iat` (and `nbf`/`exp`) may be off the clock. */
const ID_TOKEN_CLOCK_SKEW_SECONDS = 30;

function mapClaims(payload: JWTPayload): IdentityClaims {
  const parsed = claimsSchema.safeParse(payload);
  if (!parsed.success) {
    const emailIssue = parsed.error.issues.find((i) => i.path[0] === 'email');
    throw new UnauthenticatedError(
      emailIssue ? 'The ID token carries no valid email' : 'The ID token is missing required claims',
    );
  }
  const c = parsed.data;
  return {
    providerUserId: c.user_id ?? c.sub,
    email: c.email.toLowerCase(),
    verified: c.email_verified ?? false,
    ...(c.name !== undefined && { name: c.name }),
    picture: pictureOf(c.picture),
  };
}

/** Creates a verifier for one provider; the JWKS is fetched once and cached by jose. */
export function identityTokenVerifier(settings: IdentityProviderSettings, clock: Clock) {
  const jwks = createRemoteJWKSet(new URL(settings.jwksUrl), {
    timeoutDuration: settings.jwksTimeoutMs,
    cooldownDuration: 30_000,
  });
  return async function verifyIdToken(token: string): Promise<IdentityClaims> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: settings.issuer,
        audience: settings.audience,
        currentDate: clock(),
        // Providers sign ID tokens asymmetrically; HS* here would let a public key act as a secret.
        algorithms: ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'PS256'],
        requiredClaims: ['sub', 'exp', 'iat'],
        clockTolerance: ID_TOKEN_CLOCK_SKEW_SECONDS,
      }));
      // jose checks `iat` only against a maximum age; a token issued in the future is forged or
      // from a broken clock, and either way not one to trust.
      if (payload.iat! > Math.floor(clock().getTime() / 1000) + ID_TOKEN_CLOCK_SKEW_SECONDS) {
        throw new errors.JWTClaimValidationFailed('"iat" is in the future', payload, 'iat', 'check_failed');
      }
    } catch (err) {
      // A provider we cannot reach is our outage, not the caller's bad token.
      const unreachable =
        !(err instanceof errors.JOSEError) || err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid;
      if (unreachable) throw new DependencyUnavailableError('The identity provider could not be reached', 5);
      throw new UnauthenticatedError('Invalid or expired ID token');
    }
    return mapClaims(payload);
  };
}
