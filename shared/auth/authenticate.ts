import { dynamo, tableName } from '../clients.ts';
import { ForbiddenError, UnauthorizedError } from '../http/errors.ts';
import { UserRepository } from '../users/user-repository.ts';
import { bearerToken, verifyServiceToken, type Role } from './service-token.ts';

export interface AuthUser {
  id: string;
  email: string;
  role: Role;
}

let users: UserRepository | undefined;

/**
 * The caller of a protected route: a valid service JWT whose user still exists. The role comes
 * from the stored user (refreshed at each sign-in), not from the token, so a demotion applies
 * at once. Admin-only routes answer 403 to everyone else.
 */
export async function authenticate(headers: Record<string, string | undefined>, mode: 'user' | 'admin'): Promise<AuthUser> {
  const { userId } = await verifyServiceToken(bearerToken(headers));
  users ??= new UserRepository(dynamo(), tableName());
  const user = await users.get(userId);
  if (!user) throw new UnauthorizedError('The user of this token no longer exists');
  if (mode === 'admin' && user.role !== 'admin') throw new ForbiddenError('This operation requires the admin role');
  return { id: user.id, email: user.email, role: user.role };
}
