import { createId } from '../ids.ts';
import type { IdentityClaims } from '../auth/identity-provider.ts';
import type { Role, ServiceTokens } from '../auth/service-token.ts';
import { isoNow, type Clock } from '../clock.ts';
import type { User, UserRepository } from './user-repository.ts';
import { roleFor } from './roles.ts';

export interface SignInResult {
  user: User;
  token: string;
  created: boolean;
}

export interface SignInDeps {
  /** Checks the identity provider's ID token (signature, issuer, audience, expiry) and reads its claims. */
  verifyIdToken: (idToken: string) => Promise<IdentityClaims>;
  users: UserRepository;
  tokens: Pick<ServiceTokens, 'issue'>;
  adminEmails: string[];
  clock: Clock;
}

/**
 * Exchanges an identity provider's ID token for a user and a service token:
 * 0. verify the token and read its claims;
 * 1. decide the role (admin only for a verified email listed in ADMIN_EMAILS, else user);
 * 2. find the user through the identity claim and refresh the provider's fields;
 * 3. otherwise create the user; if a concurrent sign-in won the race, return its user;
 * 4. sign a service JWT for the user.
 */
export async function signIn(deps: SignInDeps, input: { idToken: string }): Promise<SignInResult> {
  const claims = await deps.verifyIdToken(input.idToken);
  const { users, adminEmails } = deps;
  const withToken = async (user: User, created: boolean): Promise<SignInResult> => ({
    user,
    token: await deps.tokens.issue({ userId: user.id, role: user.role }),
    created,
  });
  const role: Role = roleFor(claims, adminEmails);
  const profile = { ...claims, role };
  const now = isoNow(deps.clock);

  // A few rounds settle any interleaving of concurrent sign-ins of the same identity.
  for (let attempt = 0; attempt < 5; attempt++) {
    const existingId = await users.userIdForIdentity(claims.providerUserId);
    if (existingId) {
      const user = await users.refresh(existingId, profile, now);
      if (user) return withToken(user, false);
      // The identity points at a deleted user: the person signs up afresh, under a new id,
      // so tokens issued to the deleted user stay dead.
      const fresh = await users.createProfile(createId(), profile, now);
      if (await users.repointIdentity(claims.providerUserId, existingId, fresh.id)) return withToken(fresh, true);
      await users.deleteProfile(fresh.id);
      continue;
    }
    const fresh = await users.createProfile(createId(), profile, now);
    if (await users.claimIdentity(claims.providerUserId, fresh.id, now)) return withToken(fresh, true);
    // Another sign-in claimed the identity first: drop ours and answer with theirs.
    await users.deleteProfile(fresh.id);
  }
  throw new Error('Sign-in did not settle after concurrent updates');
}
