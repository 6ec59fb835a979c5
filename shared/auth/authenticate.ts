import { dynamo, tableName } from '../clients.ts';
import { config } from '../config.ts';
import { AccessDeniedError, UnauthenticatedError } from '../errors.ts';
import { UserRepository } from '../users/user-repository.ts';
import { actingRole } from '../users/roles.ts';
import { bearerToken, verifyServiceToken, type Role, type ServiceTokenClaims } from './service-token.ts';

export interface AuthUser {
  id: string;
  role: Role;
}

let users: UserRepository | undefined;

/** The claims of a valid service JWT in the Authorization header, or a 401. */
export function verifyCaller(headers: Record<string, string | undefined>): Promise<ServiceTokenClaims> {
  return verifyServiceToken(bearerToken(headers));
}

/**
 * Confirms the token's user against the table: it must still exist, and its stored role (set
 * at each sign-in) must still be the token's, so a token issued before a later sign-in changed
 * the role has to be renewed through POST /auth. The request then acts with the role the
 * configuration grants now (shared/users/roles.ts): an admin token of an email no longer in
 * ADMIN_EMAILS acts as a user. Admin-only routes answer 403 to everyone else.
 */
export async function confirmCaller(claims: ServiceTokenClaims, mode: 'user' | 'admin'): Promise<AuthUser> {
  users ??= new UserRepository(dynamo(), tableName());
  const user = await users.get(claims.userId);
  if (!user) throw new UnauthenticatedError('The user of this token no longer exists');
  if (user.role !== claims.role) throw new UnauthenticatedError('Your role has changed: sign in again');
  const role = actingRole(claims.role, user, config().ADMIN_EMAILS);
  if (mode === 'admin' && role !== 'admin') throw new AccessDeniedError('This operation requires the admin role');
  return { id: user.id, role };
}
