import { dynamo, tableName } from '../clients.ts';
import { ForbiddenError, UnauthorizedError } from '../http/errors.ts';
import { UserRepository } from '../users/user-repository.ts';
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
 * at each sign-in from ADMIN_EMAILS) must still be the token's, so a token issued before a role
 * change has to be renewed through POST /auth. Admin-only routes answer 403 to everyone else.
 */
export async function confirmCaller(claims: ServiceTokenClaims, mode: 'user' | 'admin'): Promise<AuthUser> {
  users ??= new UserRepository(dynamo(), tableName());
  const user = await users.get(claims.userId);
  if (!user) throw new UnauthorizedError('The user of this token no longer exists');
  if (user.role !== claims.role) throw new UnauthorizedError('Your role has changed: sign in again');
  if (mode === 'admin' && user.role !== 'admin') throw new ForbiddenError('This operation requires the admin role');
  return { id: user.id, role: user.role };
}
