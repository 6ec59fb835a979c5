import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { fixturePdf } from '#test/helpers/make-pdf.ts';

// Issue 13 item 9: the presigned upload must sign the content type it announces, so the URL
// cannot store an object of another type under the user's key. The local S3 checks no
// signatures (DESIGN §10), so the URL itself is what is asserted; the upload with the announced
// headers still succeeds (the control).

let app: TestApp;
let token: string;

beforeAll(async () => {
  app = await startTestApp({ pollers: false });
  ({ token } = await app.signIn('uploader@example.com'));
});
afterAll(() => app?.stop());

test('the PUT URL signs content-type, content-length and host; the client is told to send that content type', async () => {
  const pdf = await fixturePdf('hello-world.pdf');
  const res = await app.request('POST', '/upload', {
    token,
    body: { fileName: 'a.pdf', contentType: 'application/pdf', size: pdf.byteLength },
  });
  expect(res.status).toBe(201);
  const { uploadUrl, uploadHeaders, downloadUrl } = res.body.data;
  const signed = new URL(uploadUrl).searchParams.get('X-Amz-SignedHeaders')?.split(';');
  expect(signed).toEqual(expect.arrayContaining(['content-type', 'content-length', 'host']));
  expect(uploadHeaders).toEqual({ 'content-type': 'application/pdf' });
  // The type is a signed header, not a query parameter anyone could leave out.
  expect(new URL(uploadUrl).searchParams.has('Content-Type')).toBe(false);

  const put = await fetch(uploadUrl, { method: 'PUT', headers: uploadHeaders, body: pdf });
  expect(put.status).toBe(200);
  const got = await fetch(downloadUrl);
  expect(Buffer.from(await got.arrayBuffer()).equals(pdf)).toBe(true);
});
