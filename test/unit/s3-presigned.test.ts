import type { IncomingMessage } from 'node:http';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { presignedRefusal } from '#infra/local/s3-presigned.ts';

// The local S3's check of a presigned URL against URLs the AWS SDK's presigner makes: accepted as
// signed, refused when a signed header differs, when it has expired, or when the URL was altered;
// not judged when signed with keys other than the emulators'.

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const s3 = new S3Client({
  region: 'us-east-1',
  credentials,
  endpoint: 'http://127.0.0.1:4566',
  forcePathStyle: true,
  requestChecksumCalculation: 'WHEN_REQUIRED',
});
afterAll(() => s3.destroy());

async function presignedPut(signer = s3, expiresIn = 60) {
  const url = new URL(
    await getSignedUrl(
      signer,
      new PutObjectCommand({ Bucket: 'b', Key: 'uploads/u/f.pdf', ContentType: 'application/pdf', ContentLength: 10 }),
      { expiresIn, signableHeaders: new Set(['content-type']) },
    ),
  );
  return url;
}

/** The request a client sends with the URL (what the check reads of an IncomingMessage). */
const request = (url: URL, headers: Record<string, string>) =>
  ({ method: 'PUT', url: `${url.pathname}${url.search}`, headers: { host: url.host, ...headers } }) as IncomingMessage;

const signedAt = (url: URL) => {
  const d = url.searchParams.get('X-Amz-Date')!;
  return Date.UTC(
    +d.slice(0, 4),
    +d.slice(4, 6) - 1,
    +d.slice(6, 8),
    +d.slice(9, 11),
    +d.slice(11, 13),
    +d.slice(13, 15),
  );
};

test('the request as signed is accepted', async () => {
  const url = await presignedPut();
  expect(
    presignedRefusal(request(url, { 'content-type': 'application/pdf', 'content-length': '10' }), credentials),
  ).toBeUndefined();
});

test('another length or type, or a missing signed header, is SignatureDoesNotMatch', async () => {
  const url = await presignedPut();
  const variants: Record<string, string>[] = [
    { 'content-type': 'application/pdf', 'content-length': '11' },
    { 'content-type': 'text/plain', 'content-length': '10' },
    { 'content-length': '10' },
    { 'content-type': 'application/pdf' },
  ];
  for (const headers of variants) {
    expect(presignedRefusal(request(url, headers), credentials)).toMatchObject({
      status: 403,
      code: 'SignatureDoesNotMatch',
    });
  }
});

test('an expired URL is AccessDenied "Request has expired"; one second before, it is accepted', async () => {
  const url = await presignedPut(s3, 60);
  const req = request(url, { 'content-type': 'application/pdf', 'content-length': '10' });
  expect(presignedRefusal(req, credentials, signedAt(url) + 60_000)).toBeUndefined();
  expect(presignedRefusal(req, credentials, signedAt(url) + 61_000)).toEqual({
    status: 403,
    code: 'AccessDenied',
    message: 'Request has expired',
  });
});

test('a URL signed with other keys is left to S3 (not judged here); a request without a presigned query too', async () => {
  const other = new S3Client({
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIAOTHER', secretAccessKey: 'other' },
    endpoint: 'http://127.0.0.1:4566',
    forcePathStyle: true,
  });
  const url = await presignedPut(other);
  other.destroy();
  expect(
    presignedRefusal(request(url, { 'content-type': 'text/plain', 'content-length': '1' }), credentials),
  ).toBeUndefined();
  expect(presignedRefusal({ method: 'PUT', url: '/b/k', headers: {} } as IncomingMessage, credentials)).toBeUndefined();
});
