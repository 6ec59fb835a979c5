import { writeFile } from 'node:fs/promises';
import { loadConfig } from '#shared/config/all.ts';
import { runExtract } from '#shared/ingestion/extract-stage.ts';
import { PermanentFailure } from '#shared/files/failures.ts';
import type { PipelineDeps } from '#shared/ingestion/pipeline-deps.ts';
import { makeGlyphIdPdf, makeScannedPdf } from '#test/helpers/make-script-pdfs.ts';

// With OCR_ENABLED=false, pdf-extract decides alone (the error path, with in-memory stand-ins for
// the record and the stored PDF): garbled text fails typed UNREADABLE_TEXT, a scan NO_TEXT_LAYER,
// and nothing is recorded, chunked or queued either way.

const fileId = 'c'.repeat(24);
const runId = 'd'.repeat(24);

function depsFor(pdf: Uint8Array) {
  const writes: string[] = [];
  const deps = {
    config: loadConfig({ TABLE_NAME: 't', OCR_ENABLED: 'false' }),
    files: {
      get: async () => ({ id: fileId, runId, status: 'processing' }),
      // Progress (pages read so far) is not a result; anything else recorded is.
      recordPageProgress: async () => undefined,
      recordExtraction: async (_id: string, _run: string, e: { next: string }) =>
        void writes.push(`recordExtraction ${e.next}`),
    },
    storage: {
      get: async () => pdf,
      // The stage reads the PDF from a temporary file of its own.
      toFile: (_key: string, path: string) => writeFile(path, pdf),
      put: async (key: string) => void writes.push(key),
    },
    queues: { send: async () => void writes.push('sqs') },
    clock: () => new Date(),
  } as unknown as PipelineDeps;
  return { deps, writes };
}

test.each([
  ['a font without a Unicode map', () => makeGlyphIdPdf(), 'UNREADABLE_TEXT'],
  ['a scan', () => makeScannedPdf(['Only an image of this sentence.']), 'NO_TEXT_LAYER'],
])('OCR off: %s fails %s and nothing is written', async (_, make, reason) => {
  const { deps, writes } = depsFor(await make());
  const run = runExtract(deps, { fileId, runId, key: 'work/x/source.pdf' });
  await expect(run).rejects.toBeInstanceOf(PermanentFailure);
  await expect(run).rejects.toMatchObject({ reason, message: expect.stringContaining('OCR is off') });
  expect(writes).toEqual([]);
});
