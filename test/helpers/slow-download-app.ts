import { type TestApp, useTestApp } from './app.ts';
import { fixturePdf } from './make-pdf.ts';

// The setting of the tests of fair ingestion: a test app whose pipeline embeds through the
// loopback OpenAI server, and a PDF server with `/small.pdf` (a one-page fixture) and `/slow.pdf`
// (1 MB at 200 bytes a second, over an hour: a download that holds its ingestion in flight for the
// whole test, since the fetch floor of 100 bytes a second over a minute never cuts it).

/** The file's app (see useTestApp), its PDF server serving /small.pdf and /slow.pdf. */
export function useSlowDownloadApp(env: Record<string, string>, ready?: (app: TestApp) => Promise<void>): TestApp {
  return useTestApp(
    async () => ({
      model: 'openai',
      pdfs: {
        '/slow.pdf': { size: 1024 * 1024, drip: { bytes: 10, everyMs: 50 } },
        '/small.pdf': { body: await fixturePdf('hello-world.pdf') },
      },
      env: { PDF_FETCH_MIN_BYTES_PER_SECOND: '100', PDF_FETCH_SLOW_WINDOW_MS: '60000', ...env },
    }),
    { ...(ready && { ready }) },
  );
}
