import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { identityTokenVerifier } from '#shared/auth/identity-provider.ts';
import { DependencyUnavailableError } from '#shared/errors.ts';
import { startJwksServer } from '#test/helpers/jwks-server.ts';

// The identity provider's keys fetched within IDP_JWKS_TIMEOUT_MS: a provider that does not answer
// in time is the service's outage (503, retry later), never the caller's bad token (401).

test('a JWKS endpoint that does not answer within the timeout is 503 DependencyUnavailable, not 401', async () => {
  const idp = await startJwksServer();
  const held: http.ServerResponse[] = [];
  let arrived!: () => void;
  const requested = new Promise<void>((resolve) => (arrived = resolve));
  const silent = http.createServer((_req, res) => {
    held.push(res); // never answered
    arrived();
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = silent.address() as AddressInfo;
    const verify = identityTokenVerifier(
      {
        preset: 'custom',
        jwksUrl: `http://127.0.0.1:${port}/jwks.json`,
        issuer: idp.issuer,
        audience: idp.audience,
        jwksTimeoutMs: 500,
      },
      () => new Date(),
    );
    const token = await idp.sign({ sub: 'user-1', email: 'a@example.com', email_verified: true });
    const outcome = verify(token);
    await requested;
    const err = await outcome.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DependencyUnavailableError);
    expect(err).toMatchObject({ message: 'The identity provider could not be reached' });
    // A verifier of the provider that answers (a deadline no loaded machine reaches): its keys, the token's claims.
    const answering = identityTokenVerifier(
      { preset: 'custom', jwksUrl: idp.url, issuer: idp.issuer, audience: idp.audience, jwksTimeoutMs: 20_000 },
      () => new Date(),
    );
    await expect(answering(token)).resolves.toMatchObject({ email: 'a@example.com', verified: true });
  } finally {
    for (const res of held) res.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
    await idp.close();
  }
});
