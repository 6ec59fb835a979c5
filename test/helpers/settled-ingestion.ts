import type { TestApp } from './app.ts';
import { until } from './until.ts';

/** An answer of POST /message/pdf as a test reads it: its status and body. */
interface IngestAnswer {
  status: number;
  body: any;
}

/**
 * POST /message/pdf's answer once its run has ended: a 202 (the run outlived the request's own
 * wait, as on a loaded machine) is followed through GET /message/pdf/{fileId} and answered as the
 * request would have answered a run that ended in time (200 with the status, or 400 with the
 * failure), so a test waits for the event and never for a clock.
 */
export async function settledIngestion(
  app: TestApp,
  token: string,
  fileId: string,
  res: IngestAnswer,
): Promise<IngestAnswer> {
  if (res.status !== 202) return res;
  const settled = await until(
    `file ${fileId} read`,
    () => app.request('GET', `/message/pdf/${fileId}`, { token }),
    (r) => r.body.data?.embeddingsData?.status !== 'processing',
  );
  const data = settled.body.data.embeddingsData;
  return data.status === 'failed'
    ? { status: 400, body: { errors: [{ code: data.failure.reason, message: data.failure.message }] } }
    : { status: 200, body: { data: { embeddingsData: data } } };
}
