import { jest } from '@jest/globals';

// The service JWT: issued and verified with the pinned algorithm; a token verified once is
// remembered by its bytes, but its expiry and not-before still apply on every later request.

process.env.TABLE_NAME = 'unused';
process.env.SERVICE_JWT_SECRET = 's'.repeat(40);
process.env.SERVICE_JWT_TTL_SECONDS = '120';
const { issueServiceToken, verifyServiceToken } = await import('#shared/auth/service-token.ts');
const { UnauthenticatedError } = await import('#shared/errors.ts');

afterEach(() => jest.useRealTimers());

test('a token round-trips its subject and role', async () => {
  const token = await issueServiceToken({ userId: 'u1', role: 'admin' });
  await expect(verifyServiceToken(token)).resolves.toEqual({ userId: 'u1', role: 'admin' });
});

test('a remembered token is refused once it expires', async () => {
  jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z'), doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  const token = await issueServiceToken({ userId: 'u2', role: 'user' });
  await expect(verifyServiceToken(token)).resolves.toEqual({ userId: 'u2', role: 'user' });
  jest.setSystemTime(new Date('2026-01-01T00:01:59Z'));
  await expect(verifyServiceToken(token)).resolves.toEqual({ userId: 'u2', role: 'user' });
  jest.setSystemTime(new Date('2026-01-01T00:02:00Z'));
  await expect(verifyServiceToken(token)).rejects.toBeInstanceOf(UnauthenticatedError);
  await expect(verifyServiceToken(token)).rejects.toBeInstanceOf(UnauthenticatedError);
});

test('a token differing by one byte is verified afresh and refused', async () => {
  const token = await issueServiceToken({ userId: 'u3', role: 'user' });
  await verifyServiceToken(token);
  const at = token.lastIndexOf('.') + 1; // the signature's first character: all six bits count
  const forged = token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
  await expect(verifyServiceToken(forged)).rejects.toBeInstanceOf(UnauthenticatedError);
});
