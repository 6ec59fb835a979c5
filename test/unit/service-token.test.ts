import { ServiceTokens } from '#shared/auth/service-token.ts';
import { systemClock, type Clock } from '#shared/clock.ts';
import { UnauthenticatedError } from '#shared/errors.ts';

// The service JWT: issued and verified with the pinned algorithm; a token verified once is
// remembered by its bytes, but its expiry and not-before still apply on every later request.

const settings = { secret: 's'.repeat(40), issuer: 'test-issuer', audience: 'test-audience', ttlSeconds: 120 };

test('a token round-trips its subject and role', async () => {
  const tokens = new ServiceTokens(settings, systemClock);
  const token = await tokens.issue({ userId: 'u1', role: 'admin' });
  await expect(tokens.verify(token)).resolves.toEqual({ userId: 'u1', role: 'admin' });
});

test('a remembered token is refused once it expires', async () => {
  let now = new Date('2026-01-01T00:00:00Z');
  const clock: Clock = () => now;
  const tokens = new ServiceTokens(settings, clock);
  const token = await tokens.issue({ userId: 'u2', role: 'user' });
  await expect(tokens.verify(token)).resolves.toEqual({ userId: 'u2', role: 'user' });
  now = new Date('2026-01-01T00:01:59Z');
  await expect(tokens.verify(token)).resolves.toEqual({ userId: 'u2', role: 'user' });
  now = new Date('2026-01-01T00:02:00Z');
  await expect(tokens.verify(token)).rejects.toBeInstanceOf(UnauthenticatedError);
  await expect(tokens.verify(token)).rejects.toBeInstanceOf(UnauthenticatedError);
});

test('a token differing by one byte is verified afresh and refused', async () => {
  const tokens = new ServiceTokens(settings, systemClock);
  const token = await tokens.issue({ userId: 'u3', role: 'user' });
  await tokens.verify(token);
  const at = token.lastIndexOf('.') + 1; // the signature's first character: all six bits count
  const forged = token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
  await expect(tokens.verify(forged)).rejects.toBeInstanceOf(UnauthenticatedError);
});
