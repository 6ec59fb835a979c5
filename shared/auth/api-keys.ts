import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createId } from '../ids.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, NotFoundError, UnauthenticatedError } from '../errors.ts';
import type { Page } from '../dynamo.ts';
import type { ApiKeyRecord, ApiKeyRepository } from './api-key-repository.ts';
import { API_KEY_SCOPES, type ApiKeyScope } from './api-key-scopes.ts';

// API keys for programs (docs/DECISIONS.md "API keys"): `cops_<id>_<secret>`, the secret 256
// random bits. The key is shown once, at creation; the table keeps its SHA-256 only. A request
// with a key reads the key's record by its id (consistently: a revoked key is refused on the next
// request, wherever it lands) and compares the hashes in constant time. SHA-256 and not a slow
// password hash: a slow hash buys time against guessing a low-entropy secret, and 256 random bits
// cannot be guessed at any speed, while every request would pay the slow hash's cost.

export const API_KEY_PREFIX = 'cops_';
const SECRET_BYTES = 32;
const KEY_FORMAT = /^cops_([a-z][a-z0-9]{23})_([A-Za-z0-9_-]{43})$/;
/** A key in use records its use at most this often (one write a minute, not one per request). */
const LAST_USED_PRECISION_MS = 60_000;
/** How many verified keys one instance recalls (the least recently used leave first). */
const RECALLED_KEYS_MAX = 1_000;

/** Whether a bearer token is an API key (else it is taken for a service JWT). */
export const isApiKey = (token: string) => token.startsWith(API_KEY_PREFIX);

const hashOf = (key: string) => createHash('sha256').update(key, 'utf8').digest();

/** A key this instance verified before: what it proved then, and its SHA-256 to check it again. */
export interface RecalledKey {
  caller: ApiKeyCaller;
  hash: Buffer;
}

/** What a valid key proves: its user and what it may do. */
export interface ApiKeyCaller {
  userId: string;
  keyId: string;
  scopes: ApiKeyScope[];
}

const invalidKey = () => new UnauthenticatedError('Invalid API key');

/** Checks the API keys of requests; one per function. */
export class ApiKeyVerifier {
  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly clock: Clock,
  ) {}

  /** Keys verified here, by their SHA-256 (never the key): what each proved. */
  private readonly recalled = new Map<string, ApiKeyCaller>();

  /**
   * What the key proved when this instance last verified it, with its hash, and no read;
   * undefined if it has not. Never enough alone: the caller must still `confirmRecalled` it
   * against its record, read afresh, before it answers.
   */
  recall(key: string): RecalledKey | undefined {
    const hash = hashOf(key);
    const id = hash.toString('hex');
    const caller = this.recalled.get(id);
    if (!caller) return undefined;
    this.recalled.delete(id); // to the back of the queue: the least recently used leave first
    this.recalled.set(id, caller);
    return { caller, hash };
  }

  /** Checks the key against its record, read consistently: a revoked key fails at once. */
  async verify(key: string): Promise<ApiKeyCaller> {
    const parts = KEY_FORMAT.exec(key);
    if (!parts) throw invalidKey();
    return this.confirmRecalled(hashOf(key), await this.keys.get(parts[1]!));
  }

  /** Checks a key, by its hash, against its record as just read (undefined: there is none). */
  async confirmRecalled(given: Buffer, record: ApiKeyRecord | undefined): Promise<ApiKeyCaller> {
    const id = given.toString('hex');
    try {
      const caller = await this.check(given, record);
      this.recalled.delete(id);
      if (this.recalled.size >= RECALLED_KEYS_MAX) this.recalled.delete(this.recalled.keys().next().value!);
      this.recalled.set(id, caller);
      return caller;
    } catch (err) {
      this.recalled.delete(id);
      throw err;
    }
  }

  private async check(given: Buffer, record: ApiKeyRecord | undefined): Promise<ApiKeyCaller> {
    if (!record) throw invalidKey();
    const stored = Buffer.from(record.hash, 'hex');
    if (stored.length !== given.length || !timingSafeEqual(stored, given)) throw invalidKey();
    const now = this.clock().getTime();
    if (record.expiresAt !== null && now >= Date.parse(record.expiresAt))
      throw new UnauthenticatedError('This API key has expired');
    if (record.lastUsedAt === null || now - Date.parse(record.lastUsedAt) >= LAST_USED_PRECISION_MS) {
      await this.keys.touch(
        record.id,
        new Date(now).toISOString(),
        new Date(now - LAST_USED_PRECISION_MS).toISOString(),
      );
    }
    return { userId: record.userId, keyId: record.id, scopes: record.scopes };
  }
}

export interface ApiKeyDeps {
  keys: ApiKeyRepository;
  clock: Clock;
  /** The most keys one user may hold (API_KEYS_MAX_PER_USER). */
  maxPerUser: number;
}

/** A key as its owner sees it in a list: everything but the key. */
export interface ApiKeyView {
  id: string;
  name: string;
  scopes: ApiKeyScope[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

const view = ({ id, name, scopes, createdAt, expiresAt, lastUsedAt }: ApiKeyRecord): ApiKeyView => ({
  id,
  name,
  scopes,
  createdAt,
  expiresAt,
  lastUsedAt,
});

const DAY_MS = 86_400_000;

/**
 * POST /me/api-keys. Steps: refuse a user at the cap → a fresh id and 256-bit secret → store the
 * key's hash, never the key → return the key, this once.
 */
export async function createApiKey(
  deps: ApiKeyDeps,
  input: { userId: string; name: string; scopes?: ApiKeyScope[] | undefined; expiresInDays?: number | undefined },
): Promise<Omit<ApiKeyView, 'lastUsedAt'> & { key: string }> {
  const held = await deps.keys.list(input.userId);
  if (held.length >= deps.maxPerUser)
    throw new ConflictError(
      `You hold ${held.length} API keys, the most allowed: revoke one (DELETE /me/api-keys/{id}) first`,
      'TOO_MANY_API_KEYS',
    );
  const id = createId();
  const key = `${API_KEY_PREFIX}${id}_${randomBytes(SECRET_BYTES).toString('base64url')}`;
  const now = deps.clock();
  const record: ApiKeyRecord = {
    id,
    userId: input.userId,
    name: input.name,
    scopes: input.scopes?.length ? [...new Set(input.scopes)] : [...API_KEY_SCOPES],
    hash: hashOf(key).toString('hex'),
    createdAt: now.toISOString(),
    expiresAt:
      input.expiresInDays === undefined ? null : new Date(now.getTime() + input.expiresInDays * DAY_MS).toISOString(),
    lastUsedAt: null,
  };
  await deps.keys.create(record);
  const { lastUsedAt: _never, ...created } = view(record);
  return { ...created, key };
}

/** GET /me/api-keys: a page of the caller's keys, newest first, without the keys themselves. */
export async function listApiKeys(
  deps: Pick<ApiKeyDeps, 'keys'>,
  input: { userId: string; limit: number; cursor?: string | undefined },
): Promise<Page<ApiKeyView>> {
  const page = await deps.keys.listPage(input.userId, input);
  return { ...page, items: page.items.map(view) };
}

/** DELETE /me/api-keys/{id}: the key is refused from the next request on; another user's key is not found. */
export async function revokeApiKey(deps: Pick<ApiKeyDeps, 'keys'>, input: { userId: string; id: string }) {
  if (!(await deps.keys.revoke(input.id, input.userId))) throw new NotFoundError('API key not found');
}
