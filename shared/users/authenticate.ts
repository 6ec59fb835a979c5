import { AccessDeniedError, UnauthenticatedError } from '../errors.ts';
import type { User, UserRepository } from './user-repository.ts';
import { actingRole } from './roles.ts';
import { bearerToken, type Role, type ServiceTokenClaims, type ServiceTokens } from '../auth/service-token.ts';
import { isApiKey, type ApiKeyCaller, type ApiKeyVerifier } from '../auth/api-keys.ts';
import type { ApiKeyScope } from '../auth/api-key-scopes.ts';

/** The API key a caller came with (absent: a service JWT). */
export interface CallerKey {
  id: string;
  scopes: ApiKeyScope[];
}

export interface AuthUser {
  id: string;
  role: Role;
  apiKey?: CallerKey;
}

/** What the bearer token says of its caller, before the user is confirmed. */
export interface CallerClaims extends ServiceTokenClaims {
  apiKey?: CallerKey;
  /**
   * The SHA-256 of an API key this instance verified before: its claims are what it proved then,
   * and `confirm` checks it again against its record, read with the user's profile.
   */
  recalledKey?: Buffer;
}

const keyClaims = (key: ApiKeyCaller): CallerClaims => ({
  userId: key.userId,
  role: 'user',
  apiKey: { id: key.keyId, scopes: key.scopes },
});

/**
 * A caller with an API key may do what needs `scope` only if the key holds it (AccessDeniedError);
 * a service JWT may do anything its route allows. For a route (its `keyScope`), and for parts of
 * one that need more than the route does (the MCP server's tools).
 */
export function assertKeyScope(key: CallerKey | undefined, scope: ApiKeyScope, what: 'route' | 'tool'): void {
  if (key && !key.scopes.includes(scope))
    throw new AccessDeniedError(`This API key lacks the scope "${scope}" this ${what} needs`);
}

/** Who is calling: the service JWT (or API key) checked, then its user confirmed against the table. */
export class CallerAuthenticator {
  constructor(
    private readonly tokens: ServiceTokens,
    private readonly users: UserRepository,
    private readonly adminEmails: string[],
    /** Checks API keys (`cops_…`); absent: a key is refused like any invalid token. */
    private readonly apiKeys?: ApiKeyVerifier,
  ) {}

  /**
   * The claims of a valid service JWT or API key in the Authorization header, or
   * UnauthenticatedError. A key acts as its user with the role `user` (docs/DECISIONS.md "API keys").
   */
  async verify(headers: Record<string, string | undefined>): Promise<CallerClaims> {
    const token = bearerToken(headers);
    if (!isApiKey(token)) return this.tokens.verify(token);
    if (!this.apiKeys) throw new UnauthenticatedError('Invalid API key');
    // A key this instance verified before names its user and scopes at once; its record is read
    // again, consistently, beside the user's (docs/DECISIONS.md "API keys": checked on every request).
    const recalled = this.apiKeys.recall(token);
    if (recalled) return { ...keyClaims(recalled.caller), recalledKey: recalled.hash };
    return keyClaims(await this.apiKeys.verify(token));
  }

  /**
   * Whether the caller may use a route: a service JWT always; an API key only on a route that
   * names the scope it needs (`keyScope`), and only if the key holds it. Routes that name none
   * (managing keys, the account, orders, admin work) are refused to keys.
   */
  checkScope(claims: CallerClaims, keyScope: ApiKeyScope | undefined): void {
    if (!claims.apiKey) return;
    if (!keyScope)
      throw new AccessDeniedError('API keys cannot be used on this route: use a service token from POST /auth');
    assertKeyScope(claims.apiKey, keyScope, 'route');
  }

  /**
   * Confirms the token's user against the table: it must still exist, and its stored role (set
   * at each sign-in) must still be the token's, so a token issued before a later sign-in changed
   * the role has to be renewed through POST /auth. The request then acts with the role the
   * configuration grants now (shared/users/roles.ts): an admin token of an email no longer in
   * ADMIN_EMAILS acts as a user. Admin-only routes refuse everyone else (AccessDeniedError). An
   * API key's user must exist too (a user being erased ends its keys at once) and acts as a user.
   */
  async confirm(claims: CallerClaims, mode: 'user' | 'admin'): Promise<AuthUser> {
    let user: User | undefined;
    if (claims.recalledKey && claims.apiKey) {
      // One read for both; a refused key outranks whatever the user read finds.
      const read = await this.users.getWithApiKey(claims.userId, claims.apiKey.id);
      await this.apiKeys!.confirmRecalled(claims.recalledKey, read.key);
      user = read.user;
    } else user = await this.users.get(claims.userId);
    if (!user) throw new UnauthenticatedError('The user of this token no longer exists');
    if (claims.apiKey) {
      if (mode === 'admin') throw new AccessDeniedError('API keys cannot be used on admin routes');
      return { id: user.id, role: 'user', apiKey: claims.apiKey };
    }
    if (user.role !== claims.role) throw new UnauthenticatedError('Your role has changed: sign in again');
    const role = actingRole(claims.role, user, this.adminEmails);
    if (mode === 'admin' && role !== 'admin')
      throw new AccessDeniedError(
        'This operation requires the admin role: admins are the emails in the ADMIN_EMAILS setting, ' +
          'and take the role by signing in again at POST /auth',
      );
    return { id: user.id, role };
  }
}
