import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { fixturePdf } from '#test/helpers/make-pdf.ts';
import { declareUpload, uploadFile } from '#test/helpers/files.ts';
import { installTripwire, type Tripwire } from '#test/helpers/loopback-tripwire.ts';

// With PDF_ALLOW_LOOPBACK=false (the deployed setting), every spelling of a loopback URL is
// refused with a 400 before anything is fetched: the test server never sees a request.

let app: TestApp;
let token: string;
let tripwire: Tripwire;

beforeAll(async () => {
  // Some cases name non-loopback addresses: a broken guard must fail here, not reach a network.
  tripwire = installTripwire();
  app = await startTestApp({ pdfs: true, env: { PDF_ALLOW_LOOPBACK: 'false' } });
  ({ token } = await app.signIn('attacker@example.com'));
  app.pdfs.serve('/doc.pdf', { body: await fixturePdf('hello-world.pdf') });
  app.pdfs.redirect('/to-loopback', `http://127.0.0.1:${app.pdfs.port}/doc.pdf`);
});
afterAll(async () => {
  await app?.stop();
  tripwire?.uninstall();
});

test.each([
  'http://127.0.0.1:{port}/doc.pdf',
  'http://localhost:{port}/doc.pdf',
  'http://[::1]:{port}/doc.pdf',
  'http://2130706433:{port}/doc.pdf',
  'http://0x7f.1:{port}/doc.pdf',
  'http://0177.0.0.1:{port}/doc.pdf',
  'http://127.1:{port}/doc.pdf',
  'http://[::ffff:127.0.0.1]:{port}/doc.pdf',
  'http://127.0.0.1:{port}/to-loopback',
  'http://0.0.0.0:{port}/doc.pdf',
  'http://169.254.169.254/latest/meta-data/',
  'http://user:pass@127.0.0.1:{port}/doc.pdf',
  'ftp://127.0.0.1:{port}/doc.pdf',
])('%s is refused (400) and nothing is fetched', async (template) => {
  const fileId = await uploadFile(app, token, 'x.pdf', 743);
  const url = template.replace('{port}', String(app.pdfs.port));
  const res = await app.request('POST', '/message/pdf', { token, body: { url, fileId } });
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ success: false, statusCode: 400, errors: [{ path: 'body.url' }] });
  expect(res.body.message).toMatch(/not allowed|credentials|http/);
  expect(app.pdfs.count()).toBe(0);
  expect(tripwire.attempts).toEqual([]); // refused before any connection was tried
  const status = await app.request('GET', `/message/pdf/${fileId}`, { token });
  expect(status.body.data.embeddingsData.status).toBe('uploaded'); // nothing started
});

test('the presigned download URL of the local S3 is a loopback URL too, and is refused', async () => {
  const { fileId, downloadUrl } = await declareUpload(app, token, 'x.pdf', 743);
  const res = await app.request('POST', '/message/pdf', { token, body: { url: downloadUrl, fileId } });
  expect(res.status).toBe(400);
});
