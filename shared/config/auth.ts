import * as z from '../zod.ts';
import { settingsPiece } from './core.ts';
import { int, csv, optionalUrl, str } from './fields.ts';

// Who may call: the identity provider that signs users in (POST /auth), the service's own JWT,
// administrators and API keys. Read by the HTTP layer of every API function and by sign-in.

export const authSettings = settingsPiece({
  // Identity provider (POST /auth). A preset fills the three IDP_* values; explicit ones win.
  IDP_PRESET: z.optional(z.enum(['custom', 'firebase', 'google', 'cognito', 'local'])),
  IDP_JWKS_URL: optionalUrl,
  IDP_ISSUER: z.optional(str()),
  IDP_AUDIENCE: z.optional(str()),
  // How long fetching the provider's keys may take before POST /auth answers 503 (within API
  // Gateway's 29 s). jose caches the keys per instance; a failed fetch is tried afresh next time.
  IDP_JWKS_TIMEOUT_MS: z._default(int(500, 20_000), 5_000),
  FIREBASE_PROJECT_ID: z.optional(z.string().check(z.regex(/^[a-z0-9-]+$/))),
  GOOGLE_CLIENT_ID: z.optional(str()),
  COGNITO_USER_POOL_ID: z.optional(z.string().check(z.regex(/^[\w-]+_[0-9a-zA-Z]+$/))),
  COGNITO_CLIENT_ID: z.optional(str()),

  // Service JWT: the secret from the environment, or from Secrets Manager when deployed.
  SERVICE_JWT_SECRET: z.optional(z.string().check(z.minLength(32, 'must be at least 32 characters'))),
  SERVICE_JWT_SECRET_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  SERVICE_JWT_ISSUER: z._default(str(), 'chat-orders-pdf-service'),
  SERVICE_JWT_AUDIENCE: z._default(str(), 'chat-orders-pdf-service-api'),
  SERVICE_JWT_TTL_SECONDS: z._default(int(60, 90 * 24 * 3600), 30 * 24 * 3600),
  ADMIN_EMAILS: z._default(csv, []),
  // API keys (shared/auth/api-keys.ts): the most one user may hold at once.
  API_KEYS_MAX_PER_USER: z._default(int(1, 1_000), 25),
});
