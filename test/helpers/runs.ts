import { createId } from '#shared/ids.ts';
import type { FileRepository } from '#shared/files/file-repository.ts';

/**
 * A run of `fileId` brought to its embed stage by hand, recorded the way the pipeline records one
 * (started from `url`, downloaded as bytes of `sha256`, read into `chunks` chunks in `partsTotal`
 * parts, every page of text) and queued nowhere; its run id. The test writes the parts itself.
 */
export async function runAtEmbed(
  files: FileRepository,
  fileId: string,
  {
    url,
    sha256,
    pages,
    chunks,
    partsTotal,
  }: { url: string; sha256: string; pages: number; chunks: number; partsTotal: number },
): Promise<string> {
  const runId = createId();
  const userId = (await files.get(fileId))!.userId;
  const now = new Date().toISOString();
  await files.startRun({ id: fileId, userId, runId, url, force: false, now });
  await files.recordDownload(fileId, runId, { sha256, size: 1 }, now);
  await files.recordExtraction(
    fileId,
    runId,
    { next: 'embed', pages, textPages: pages, unreadablePages: 0, chunks, partsTotal },
    now,
  );
  return runId;
}
