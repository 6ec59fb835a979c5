import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { fixturePdf } from '#test/helpers/make-pdf.ts';

// The presigned upload must sign the content type and length it announces, so the URL cannot
// store an object of another type or size under the user's key. The URL itself is asserted, and
// the local S3 checks the signature as S3 does (infra/local/s3-presigned.ts): more bytes than
// declared, another content type or none is refused with S3's 403 SignatureDoesNotMatch, and the
// upload with the announced headers succeeds (the control).

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

describe('the local S3 refuses what S3 refuses', () => {
  let pdf: Buffer;
  let upload: { uploadUrl: string; uploadHeaders: Record<string, string>; downloadUrl: string };
  beforeAll(async () => {
    pdf = await fixturePdf('hello-world.pdf');
    const res = await app.request('POST', '/upload', {
      token,
      body: { fileName: 'b.pdf', contentType: 'application/pdf', size: pdf.byteLength },
    });
    upload = res.body.data;
  });

  test.each([
    [
      'more bytes than declared',
      () => ({ headers: upload.uploadHeaders, body: Buffer.concat([pdf, Buffer.from('%')]) }),
    ],
    ['fewer bytes than declared', () => ({ headers: upload.uploadHeaders, body: pdf.subarray(1) })],
    ['another content type', () => ({ headers: { 'content-type': 'text/html' }, body: pdf })],
    ['no content type', () => ({ headers: {}, body: pdf })],
  ])('%s: 403 SignatureDoesNotMatch, and nothing is stored', async (_what, make) => {
    const put = await fetch(upload.uploadUrl, { method: 'PUT', ...make() });
    expect(put.status).toBe(403);
    expect(await put.text()).toMatch(/<Code>SignatureDoesNotMatch<\/Code>/);
    expect((await fetch(upload.downloadUrl)).status).toBe(404);
  });

  test('the URL altered (another key): 403 SignatureDoesNotMatch', async () => {
    const altered = upload.uploadUrl.replace(/\.pdf\?/, 'x.pdf?');
    const put = await fetch(altered, { method: 'PUT', headers: upload.uploadHeaders, body: pdf });
    expect(put.status).toBe(403);
    expect(await put.text()).toMatch(/<Code>SignatureDoesNotMatch<\/Code>/);
  });
});
