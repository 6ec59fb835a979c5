import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { bearerToken } from '#shared/auth/service-token.ts';
import { identityProviderSettings, identityTokenVerifier } from '#shared/auth/identity-provider.ts';
import { UserRepository } from '#shared/users/user-repository.ts';
import { signIn } from '#shared/users/sign-in.ts';

// POST /auth: identity-provider ID token in, user and service JWT out.
const verifyIdToken = identityTokenVerifier(identityProviderSettings(config()));
const users = new UserRepository(dynamo(), tableName());

export const handler = httpHandler(httpRoutes['sign-in'], {}, async ({ headers }) => {
  const claims = await verifyIdToken(bearerToken(headers));
  const { user, token, created } = await signIn(users, claims, config().ADMIN_EMAILS);
  return {
    statusCode: created ? 201 : 200,
    message: created ? 'User created' : 'Signed in',
    data: { user, token },
  };
});
