import { startTestApp, type TestApp } from './app.ts';
import { fixturePdf } from './make-pdf.ts';
import { startOpenAiTestServer } from './openai-server.ts';
import { startPdfServer, type PdfServer } from './pdf-server.ts';

// The setting of the tests of fair ingestion: a test app whose pipeline embeds through the
// loopback OpenAI server, and a PDF server with `/small.pdf` (a one-page fixture) and `/slow.pdf`
// (1 MB at 200 bytes a second, over an hour: a download that holds its ingestion in flight for the
// whole test, since the fetch floor of 100 bytes a second over a minute never cuts it).

export interface SlowDownloadApp {
  app: TestApp;
  pdfs: PdfServer;
  stop(): Promise<void>;
}

export async function startSlowDownloadApp(env: Record<string, string>): Promise<SlowDownloadApp> {
  const [ai, pdfs] = await Promise.all([startOpenAiTestServer(), startPdfServer()]);
  const app = await startTestApp({
    env: {
      OPENAI_API_KEY: 'test-key',
      OPENAI_BASE_URL: ai.baseURL,
      PDF_FETCH_MIN_BYTES_PER_SECOND: '100',
      PDF_FETCH_SLOW_WINDOW_MS: '60000',
      ...env,
    },
  }).catch(async (err: unknown) => {
    await Promise.all([pdfs.close(), ai.close()]);
    throw err;
  });
  pdfs.serve('/slow.pdf', { size: 1024 * 1024, drip: { bytes: 10, everyMs: 50 } });
  pdfs.serve('/small.pdf', { body: await fixturePdf('hello-world.pdf') });
  return {
    app,
    pdfs,
    async stop() {
      await pdfs.close();
      await app.stop();
      await ai.close();
    },
  };
}
