import type { Role } from '../auth/service-token.ts';

// The role policy, in one place (docs/DECISIONS.md "Identity"):
// - `admin` only for an email the identity provider says it verified AND that ADMIN_EMAILS lists
//   now; anyone else is `user` (an unverified address proves nothing about who holds it);
// - a request acts with the lower of its token's role and what the configuration gives now, so
//   removing an email from ADMIN_EMAILS takes effect on the next request of every token already
//   issued; a promotion waits for the next sign-in (the token says `user` until then).

export function roleFor(person: { email: string; verified: boolean }, adminEmails: readonly string[]): Role {
  return person.verified && adminEmails.includes(person.email.toLowerCase()) ? 'admin' : 'user';
}

/** The role a request acts with: the token's, unless the configuration no longer grants it. */
export function actingRole(
  tokenRole: Role,
  person: { email: string; verified: boolean },
  adminEmails: readonly string[],
): Role {
  return tokenRole === 'admin' && roleFor(person, adminEmails) === 'admin' ? 'admin' : 'user';
}
