import '#shared/config/auth.ts';
import { userRoutes } from '#shared/users/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { bearerToken, serviceTokenSettings, ServiceTokens } from '#shared/auth/service-token.ts';
import { systemClock } from '#shared/clock.ts';
import { identityProviderSettings, identityTokenVerifier } from '#shared/auth/identity-provider.ts';
import { UserRepository } from '#shared/users/user-repository.ts';
import { signIn, type SignInDeps } from '#shared/users/sign-in.ts';

// POST /auth: identity-provider ID token in, user and service JWT out.
const settings = config();
const deps: SignInDeps = {
  verifyIdToken: identityTokenVerifier(identityProviderSettings(settings), systemClock),
  users: new UserRepository(dynamo(), tableName()),
  tokens: new ServiceTokens(serviceTokenSettings(settings), systemClock),
  adminEmails: settings.ADMIN_EMAILS,
  clock: systemClock,
};

export const handler = httpHandler(userRoutes['sign-in'], {}, async ({ headers }) => {
  const { user, token, created } = await signIn(deps, { idToken: bearerToken(headers) });
  return {
    statusCode: created ? 201 : 200,
    message: created ? 'User created' : 'Signed in',
    data: { user, token },
  };
});
