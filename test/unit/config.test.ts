import { ConfigError, loadConfig } from '#shared/config/all.ts';
import { identityProviderSettings } from '#shared/auth/identity-provider.ts';
import { paymentProviderOf } from '#shared/payments/providers.ts';

const base = { TABLE_NAME: 'table' };

test('defaults make a working local configuration', () => {
  const c = loadConfig(base);
  expect(c.OPENAI_CHAT_MODEL).toBe('gpt-4o-mini');
  expect(c.OPENAI_EMBEDDING_MODEL).toBe('text-embedding-3-small');
  expect(c.PDF_MAX_BYTES).toBe(25 * 1024 * 1024);
  expect(c.PDF_ALLOW_LOOPBACK).toBe(false);
  expect(c.ADMIN_EMAILS).toEqual([]);
});

test.each([
  [{ PDF_MAX_BYTES: 'lots' }, 'PDF_MAX_BYTES'],
  [{ PDF_ALLOW_LOOPBACK: 'maybe' }, 'PDF_ALLOW_LOOPBACK'],
  [{ SERVICE_JWT_SECRET: 'short' }, 'SERVICE_JWT_SECRET'],
  [{ OPENAI_BASE_URL: 'not a url' }, 'OPENAI_BASE_URL'],
  [{ TABLE_NAME: undefined }, 'TABLE_NAME'],
  [{ PAYMENTS_SECRET_KEY: 'sk_test_only' }, 'PAYMENTS_SECRET_KEY'],
  [{ PAYMENTS_WEBHOOK_SECRET: 'whsec_only' }, 'PAYMENTS_WEBHOOK_SECRET'],
  [{ PAYMENTS_SECRET_ARN: 'prod/payments' }, 'PAYMENTS_SECRET_ARN'],
  [{ PAYMENTS_API_URL: 'ftp://api.example.com' }, 'PAYMENTS_API_URL'],
  [{ VECTOR_STORE: 'pinecone' }, 'VECTOR_STORE'],
  [{ VECTOR_STORE: 's3vectors' }, 'VECTOR_STORE'],
  [{ VECTOR_STORE: 's3vectors', S3_VECTORS_BUCKET: 'Not_A_Bucket' }, 'S3_VECTORS_BUCKET'],
])('a bad value stops start-up naming the variable (%o)', (env, name) => {
  expect(() => loadConfig({ ...base, ...env })).toThrow(ConfigError);
  expect(() => loadConfig({ ...base, ...env })).toThrow(new RegExp(`${name}:`));
});

test('payments: off by default (orders carry payment: null); on with both keys, or with the secret of both', () => {
  const payments = (env: Record<string, string>) => paymentProviderOf(loadConfig({ ...base, ...env }));
  expect(payments({})).toBeUndefined();
  expect(payments({ PAYMENTS_SECRET_KEY: 'sk_test_a', PAYMENTS_WEBHOOK_SECRET: 'whsec_b' })).toBeDefined();
  expect(payments({ PAYMENTS_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:p' })).toBeDefined();
});

test('the vector store: packs by default; S3 Vectors with its bucket', () => {
  expect(loadConfig(base).VECTOR_STORE).toBe('packs');
  expect(loadConfig({ ...base, VECTOR_STORE: 's3vectors', S3_VECTORS_BUCKET: 'my-vectors' })).toMatchObject({
    VECTOR_STORE: 's3vectors',
    S3_VECTORS_BUCKET: 'my-vectors',
  });
});

test('every bad variable is named at once', () => {
  let message = '';
  try {
    loadConfig({ ...base, PDF_MAX_BYTES: 'x', PROMPT_MAX_CHARS: '-1' });
  } catch (err) {
    message = (err as Error).message;
  }
  expect(message).toMatch(/PDF_MAX_BYTES:/);
  expect(message).toMatch(/PROMPT_MAX_CHARS:/);
});

test('ADMIN_EMAILS is a lower-cased comma list', () => {
  expect(loadConfig({ ...base, ADMIN_EMAILS: ' Boss@Example.com, ,ops@example.com' }).ADMIN_EMAILS).toEqual([
    'boss@example.com',
    'ops@example.com',
  ]);
});

describe('identity provider presets', () => {
  test('Firebase from FIREBASE_PROJECT_ID', () => {
    const s = identityProviderSettings(loadConfig({ ...base, FIREBASE_PROJECT_ID: 'my-app' }));
    expect(s).toMatchObject({
      preset: 'firebase',
      issuer: 'https://securetoken.google.com/my-app',
      audience: 'my-app',
    });
    expect(s.jwksUrl).toContain('securetoken@system.gserviceaccount.com');
  });

  test('Cognito from the user pool id', () => {
    const s = identityProviderSettings(
      loadConfig({ ...base, COGNITO_USER_POOL_ID: 'eu-west-1_AbC123', COGNITO_CLIENT_ID: 'client' }),
    );
    expect(s.issuer).toBe('https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC123');
    expect(s.jwksUrl).toBe('https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC123/.well-known/jwks.json');
    expect(s.audience).toBe('client');
  });

  test('Google needs its client id as audience', () => {
    expect(() => identityProviderSettings(loadConfig({ ...base, IDP_PRESET: 'google' }))).toThrow(/IDP_AUDIENCE/);
    expect(identityProviderSettings(loadConfig({ ...base, GOOGLE_CLIENT_ID: 'abc.apps' })).audience).toBe('abc.apps');
  });

  test('a custom provider without settings names what is missing', () => {
    expect(() => identityProviderSettings(loadConfig(base))).toThrow(/IDP_JWKS_URL, IDP_ISSUER, IDP_AUDIENCE/);
  });
});
