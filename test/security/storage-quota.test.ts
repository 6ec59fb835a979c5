import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { fixturePdf } from '#test/helpers/make-pdf.ts';
import { UsageCounters } from '#shared/limits/usage-counters.ts';
import { FileStorage } from '#shared/files/storage.ts';
import { StorageQuota } from '#shared/files/storage-quota.ts';

// A user's uploads are held to USER_STORAGE_MAX_BYTES, and a deleted upload's presigned PUT,
// still valid after the delete, cannot put an object back that nothing accounts for: the bytes
// stay charged until the URL expires, and the user's next upload after that deletes whatever was
// put there. (The expiry is reached by giving the purge a clock past it, as the next POST /upload
// of a later hour would.)

const QUOTA = 3 * 1024;

let app: TestApp;
let token: string;
let userId: string;
let db: DynamoDBDocumentClient;
let s3: S3Client;
let pdf: Buffer;

beforeAll(async () => {
  app = await startTestApp({ pollers: false, env: { USER_STORAGE_MAX_BYTES: String(QUOTA) } });
  const signedIn = await app.signIn('quota@example.com');
  token = signedIn.token;
  userId = signedIn.user.id;
  ({ db, s3 } = app.clients());
  pdf = await fixturePdf('hello-world.pdf');
  expect(pdf.byteLength).toBeLessThan(QUOTA / 2);
});
afterAll(() => app?.stop());

const upload = (size: number) =>
  app.request('POST', '/upload', { token, body: { fileName: 'q.pdf', contentType: 'application/pdf', size } });
const exists = (key: string) =>
  s3.send(new HeadObjectCommand({ Bucket: app.bucket, Key: key })).then(
    () => true,
    () => false,
  );

test('uploads past the quota are refused with 409; a deleted upload stays charged while its URL can put it back', async () => {
  const first = await upload(pdf.byteLength);
  expect(first.status).toBe(201);
  const rest = QUOTA - pdf.byteLength;
  expect((await upload(rest)).status).toBe(201);

  const over = await upload(1);
  expect(over.status).toBe(409);
  expect(over.body).toEqual({
    success: false,
    statusCode: 409,
    message: `Your files use ${QUOTA} of your ${QUOTA} bytes; delete some to upload 1 more`,
  });

  // Deleted, then put back through the URL that was handed out: S3 cannot refuse it.
  const { fileId, uploadUrl, uploadHeaders } = first.body.data;
  expect((await app.request('DELETE', `/upload/${fileId}`, { token })).status).toBe(200);
  const key = `uploads/${userId}/${fileId}.pdf`;
  expect(await exists(key)).toBe(false);
  expect((await fetch(uploadUrl, { method: 'PUT', headers: uploadHeaders, body: pdf })).status).toBe(200);
  expect(await exists(key)).toBe(true);
  expect((await upload(1)).status).toBe(409); // its bytes are still counted

  // Once the URL has expired, the next upload purges the key and has the bytes back.
  const later = () => new Date(Date.now() + (app.config.UPLOAD_URL_TTL_SECONDS + 1) * 1000);
  const counters = new UsageCounters(db, app.tableName);
  const quota = new StorageQuota(
    db,
    app.tableName,
    counters,
    new FileStorage(s3, app.bucket),
    { maxBytes: QUOTA },
    later,
  );
  expect(await quota.purgeDue(userId)).toBe(1);
  expect(await exists(key)).toBe(false);
  expect(await quota.purgeDue(userId)).toBe(0); // once
  expect(await counters.get({ subject: userId, counter: 'STORAGE' })).toBe(rest);
  expect((await upload(pdf.byteLength)).status).toBe(201);
});
