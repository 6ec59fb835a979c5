import { startTestApp, type TestApp } from '../helpers/app.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { ADMIN_EMAILS: 'boss@example.com' } });
});
afterAll(() => app?.stop());

test('a first sign-in creates the user (201) and a second one finds it (200)', async () => {
  const idToken = await app.idToken({ email: 'new@example.com', name: 'New Person' });
  const first = await app.request('POST', '/auth', { token: idToken });
  expect(first.status).toBe(201);
  expect(first.body).toMatchObject({
    success: true,
    statusCode: 201,
    data: { user: { email: 'new@example.com', role: 'user', name: 'New Person', address: null, verified: true } },
  });
  expect(first.body.data.token.split('.')).toHaveLength(3);
  expect(first.headers.get('x-request-id')).toBeTruthy();

  const second = await app.request('POST', '/auth', { token: idToken });
  expect(second.status).toBe(200);
  expect(second.body.data.user.id).toBe(first.body.data.user.id);
});
