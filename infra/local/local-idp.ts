import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';

// The local identity provider: an RS256 key kept in DATA_DIR, its JWKS served by the local
// runtime, and ID tokens shaped like Firebase's (sub, user_id, email, email_verified, name).

export const LOCAL_IDP_ISSUER = 'https://local-idp.invalid';
export const LOCAL_IDP_AUDIENCE = 'local-dev';
export const LOCAL_IDP_JWKS_PATH = '/local-idp/jwks.json';

interface StoredKey {
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

/** Reads a file created once under DATA_DIR; concurrent first runs agree on one value. */
async function readOrCreate(path: string, create: () => Promise<string>): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const value = await create();
  try {
    await writeFile(path, value, { flag: 'wx', mode: 0o600 });
    return value;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return readFile(path, 'utf8');
  }
}

const keyFile = (dataDir: string) => join(dataDir, 'local-idp-key.json');

/** Whether DATA_DIR holds the provider's key (a server has run with it). */
export const hasLocalIdpKey = (dataDir: string): boolean => existsSync(keyFile(dataDir));

async function loadKey(dataDir: string): Promise<StoredKey> {
  await mkdir(dataDir, { recursive: true });
  const text = await readOrCreate(keyFile(dataDir), async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const kid = randomBytes(8).toString('hex');
    const stored: StoredKey = {
      kid,
      privateJwk: { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' },
      publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' },
    };
    return JSON.stringify(stored);
  });
  return JSON.parse(text) as StoredKey;
}

export async function localJwks(dataDir: string): Promise<{ keys: JWK[] }> {
  return { keys: [(await loadKey(dataDir)).publicJwk] };
}

/** A stable provider user id per email, so the same person signs in as the same user. */
export const localSubject = (email: string) =>
  `local-${createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 24)}`;

export interface IdTokenOptions {
  email?: string;
  name?: string;
  subject?: string;
  verified?: boolean;
  ttlSeconds?: number;
}

export async function signLocalIdToken(dataDir: string, options: IdTokenOptions): Promise<string> {
  const { kid, privateJwk } = await loadKey(dataDir);
  const key = await importJWK(privateJwk, 'RS256');
  const subject = options.subject ?? (options.email ? localSubject(options.email) : undefined);
  if (!subject) throw new Error('An email or a subject is required');
  return new SignJWT({
    ...(options.email && { email: options.email, email_verified: options.verified ?? true }),
    ...(options.name && { name: options.name }),
    user_id: subject,
  })
    .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
    .setSubject(subject)
    .setIssuer(LOCAL_IDP_ISSUER)
    .setAudience(LOCAL_IDP_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + (options.ttlSeconds ?? 3600))
    .sign(key);
}

/** The service JWT secret of a local data directory, generated on first use. */
export function localServiceSecret(dataDir: string): Promise<string> {
  return mkdir(dataDir, { recursive: true }).then(() =>
    readOrCreate(join(dataDir, 'service-jwt-secret'), async () => randomBytes(48).toString('base64url')),
  );
}
