import { DeleteObjectsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { useTestApp } from '#test/helpers/app.ts';
import { fileChatWith } from '#test/helpers/files.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';

// A completed file whose stored vectors are gone (a local S3 lost before write-through, an
// object deleted by hand): a question in its chat answers 409 naming the file and saying how to
// ingest it again, never a 500; ingesting it again with force makes the chat answer with sources.

const app = useTestApp(async () => ({
  pdfs: { '/animals.pdf': { body: Buffer.from(await makeTextPdf(3, 8)) } },
  user: 'lost@example.com',
}));

async function deleteVectors(fileId: string): Promise<number> {
  const { s3 } = app.clients();
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: app.bucket, Prefix: `vectors/${fileId}/` }));
  // The packed vectors (not the run's page texts and PDF kept beside them).
  const keys = (listed.Contents ?? []).filter((o) => o.Key!.endsWith('.pvec')).map((o) => ({ Key: o.Key! }));
  if (keys.length) await s3.send(new DeleteObjectsCommand({ Bucket: app.bucket, Delete: { Objects: keys } }));
  return keys.length;
}

test('missing vectors: 409 naming the file, then a forced re-ingestion answers with sources', async () => {
  const { token } = app;
  const { chatId, fileId } = await fileChatWith(app, token, '/animals.pdf', 'animals');
  const url = `${app.pdfs.url}/animals.pdf`;
  expect(await deleteVectors(fileId)).toBe(1);

  const prompt = knownSentence(2, 3);
  const lost = await app.request('POST', '/message/logged-in', { token, body: { chatId, prompt } });
  expect(lost.status).toBe(409);
  expect(lost.body.message).toContain(`"animals.pdf" (file ${fileId})`);
  expect(lost.body.message).toMatch(/ingest it again: POST \/message\/pdf .*"force": true/);
  // The record still says completed; without force the ingestion is not started again.
  const served = app.pdfs.count('/animals.pdf');
  const again = await app.request('POST', '/message/pdf', { token, body: { url, fileId, chatId } });
  expect(again.status).toBe(200);
  expect(app.pdfs.count('/animals.pdf')).toBe(served);

  const forced = await app.request('POST', '/message/pdf', { token, body: { url, fileId, chatId, force: true } });
  expect(forced.status).toBe(200);
  expect(forced.body.data.embeddingsData.status).toBe('completed');
  const answered = await app.request('POST', '/message/logged-in', { token, body: { chatId, prompt } });
  expect(answered.status).toBe(200);
  expect(answered.body.data.sources[0]).toMatchObject({ fileId, fileName: 'animals.pdf', page: 2 });
});
