import type { EmbeddingsData } from './schemas.ts';
import type { Failure } from './failures.ts';
import type { FileRecord, Run, RunProgress } from './file-record.ts';
import type { RunStage } from './stages.ts';

// The API's view of a file record: `embeddingsData` of POST /message/pdf and GET /message/pdf/{id}.

const ms = (from?: string, to?: string) => (from && to ? Math.max(0, Date.parse(to) - Date.parse(from)) : undefined);

/** Any record read as one shape: what its run's stages recorded so far (nothing for a file never ingested). */
type RunView = Partial<Run> &
  RunProgress & { stage?: RunStage | 'done'; completedAt?: string; failedAt?: string; failure?: Failure };

/** Where the ingestion stands: pages read and parts embedded, each of its total once known. */
function progressOf(r: FileRecord & RunView): EmbeddingsData['progress'] {
  if (r.status !== 'processing' && r.status !== 'completed') return undefined;
  const pagesTotal = r.pagesTotal ?? r.pages;
  const ocrPages = ocrPagesOf(r);
  const extracted = r.status === 'completed' || (r.stage !== 'fetch' && r.stage !== 'extract');
  return {
    stage: r.status === 'completed' ? 'done' : (r.stage ?? 'fetch'),
    pages: {
      done: extracted ? (pagesTotal ?? 0) : (r.pagesDone ?? 0),
      ...(pagesTotal !== undefined && { total: pagesTotal }),
    },
    ocrPages,
    parts: { done: r.partsDone ?? 0, ...(r.partsTotal !== undefined && { total: r.partsTotal }) },
  };
}

/** Pages recognised by OCR of those to recognise (each range adds its pages once, so done reaches total). */
function ocrPagesOf(r: FileRecord & RunView): { done: number; total: number } | undefined {
  if (!r.ocrPagesTotal) return undefined;
  return { done: r.ocrPagesDone ?? 0, total: r.ocrPagesTotal };
}

/** `queuePlace`: a queued run's place in its owner's queue, when it was looked up. */
export function toEmbeddingsData(record: FileRecord, queuePlace?: number): EmbeddingsData {
  const progress = progressOf(record);
  const r: FileRecord & RunView = record;
  const queued = r.status === 'processing' && r.queuedAt ? { since: r.queuedAt, place: queuePlace } : undefined;
  if (queued && progress) progress.stage = 'queued';
  const timings = {
    fetchMs: ms(r.startedAt, r.fetchedAt),
    extractMs: ms(r.fetchedAt, r.extractedAt),
    embedMs: ms(r.extractedAt, r.completedAt),
    totalMs: ms(r.startedAt, r.completedAt ?? r.failedAt),
  };
  return {
    fileId: r.id,
    fileName: r.fileName,
    status: r.status,
    stage: r.stage,
    // Pages are a PDF's: another format says its parts only (docs/DECISIONS.md "Documents, not only PDFs").
    ...(!r.format || r.format === 'pdf'
      ? { pages: r.pages, textPages: r.textPages, ocrPages: r.ocrPages, unreadablePages: r.unreadablePages }
      : {}),
    queued,
    ...(r.status === 'processing' &&
      r.stage === 'ocr' &&
      r.ocrRangesTotal !== undefined && {
        ocr: {
          ranges: r.ocrRangesTotal,
          done: r.ocrRangesDone ?? 0,
          ...(progress?.ocrPages && { pages: progress.ocrPages }),
        },
      }),
    chunks: r.chunks,
    format: r.format,
    parts: r.pages,
    progress,
    model: r.model,
    dimensions: r.dimensions,
    ...(r.tokens !== undefined && r.status !== 'uploaded' && { tokens: r.tokens }),
    size: r.size,
    sha256: r.sha256,
    reusedFrom: r.reusedFrom,
    ...(r.chatIds?.length && { chatIds: r.chatIds }),
    collectionIds: r.collectionIds?.length ? r.collectionIds : undefined,
    ...(r.status === 'failed' && r.failure && { failure: r.failure }),
    ...(r.startedAt && { timings: Object.fromEntries(Object.entries(timings).filter(([, v]) => v !== undefined)) }),
    startedAt: r.startedAt,
    ...(r.completedAt && r.status === 'completed' && { completedAt: r.completedAt }),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
