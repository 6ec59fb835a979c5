import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { useSlowDownloadApp } from '#test/helpers/slow-download-app.ts';
import { until } from '#test/helpers/until.ts';
import { FileRepository } from '#shared/files/file-repository.ts';

// A queued ingestion whose release was lost (a slot freed with no run ending to release it, as
// when a run's ender dies) is released by the periodic data sweep.

const app = useSlowDownloadApp({ PDF_MAX_IN_FLIGHT_PER_USER: '1', PDF_SYNC_WAIT_MS: '0', SWEEP_INTERVAL_SECONDS: '1' });

test('a queued file left waiting with its slot free is released by the data sweep', async () => {
  const { token, user } = await app.signIn('dana-sweep@example.com');
  const upload = async () =>
    (
      await app.request('POST', '/upload', {
        token,
        body: { fileName: 'doc.pdf', contentType: 'application/pdf', size: 1000 },
      })
    ).body.data.fileId as string;
  const [slowId, waitingId] = [await upload(), await upload()];
  const ingest = (fileId: string, path: string) =>
    app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}${path}`, fileId } });
  expect((await ingest(slowId, '/slow.pdf')).status).toBe(202);
  const queued = await ingest(waitingId, '/small.pdf');
  expect(queued.body.data.embeddingsData.queued).toMatchObject({ place: 1 });

  // The slot is freed behind the service's back: no run ended, so nothing releases the queue.
  const { db } = app.clients();
  await db.send(
    new DeleteCommand({ TableName: app.config.TABLE_NAME, Key: { PK: `LIMIT#${user.id}`, SK: 'SLOT#ingestions#0' } }),
  );
  const files = new FileRepository(db, app.config.TABLE_NAME);
  const done = await until(
    'the waiting file released by the sweep and completed',
    () => files.get(waitingId),
    (r) => r?.status === 'completed' || r?.status === 'failed',
  );
  expect(done).toMatchObject({ status: 'completed' });
  expect(await files.get(slowId)).toMatchObject({ status: 'processing', stage: 'fetch' });
}, 120_000);
