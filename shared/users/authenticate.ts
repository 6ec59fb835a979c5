import { AccessDeniedError, UnauthenticatedError } from '../errors.ts';
import type { UserRepository } from './user-repository.ts';
import { actingRole } from './roles.ts';
import { bearerToken, type Role, type ServiceTokenClaims, type ServiceTokens } from '../auth/service-token.ts';

export interface AuthUser {
  id: string;
  role: Role;
}

/** Who is calling: the service JWT checked, then its user confirmed against the table. */
export class CallerAuthenticator {
  constructor(
    private readonly tokens: ServiceTokens,
    private readonly users: UserRepository,
    private readonly adminEmails: string[],
  ) {}

  /** The claims of a valid service JWT in the Authorization header, or UnauthenticatedError. */
  verify(headers: Record<string, string | undefined>): Promise<ServiceTokenClaims> {
    return this.tokens.verify(bearerToken(headers));
  }

  /**
   * Confirms the token's user against the table: it must still exist, and its stored role (set
   * at each sign-in) must still be the token's, so a token issued before a later sign-in changed
   * the role has to be renewed through POST /auth. The request then acts with the role the
   * configuration grants now (shared/users/roles.ts): an admin token of an email no longer in
   * ADMIN_EMAILS acts as a user. Admin-only routes refuse everyone else (AccessDeniedError).
   */
  async confirm(claims: ServiceTokenClaims, mode: 'user' | 'admin'): Promise<AuthUser> {
    const user = await this.users.get(claims.userId);
    if (!user) throw new UnauthenticatedError('The user of this token no longer exists');
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
