import { checkContentBudget, type ContentLimits } from './content-budget.ts';
import { extractText, loadPdfjs, type ExtractResult } from './extract.ts';
import type { PageRange } from './page-ranges.ts';
import { PermanentFailure, type FailureReason } from '../files/failures.ts';
import type { TextVerdict } from './text-quality.ts';
import type { PageBlock } from './layout/page-layout.ts';
import type { PageLayout } from './positions.ts';
import { flushCompileCache } from 'node:module';
import { readFile } from 'node:fs/promises';
import { ReadRefused, type DocumentFormat, type DocumentPart, type ReaderLimits } from '../readers/reader.ts';
import { readDocument } from '../readers/documents.ts';
import { asError } from '../errors.ts';
import { openForDrawing, type KeptImage, type RenderedPage } from './ocr/render.ts';
import type { ImageBudget } from './ocr/image-budget.ts';

// The pdf.js child process (see bounded-child.ts): receives a document over IPC (to read its
// text: the path of a file, opened in ranges, see extract.ts) and either reads its text (checking
// its content budget first), sending each page back as it is read, then waits for the next
// document; or draws the pages the parent asks for one by one (a page whose image costs more than
// the child can afford is reported unreadable before anything is decoded), then exits; it exits too after any failure. Whatever the document
// does to this process (heap exhausted, a V8 fatal error, an endless parse or drawing) ends here;
// the parent sees the exit, or stops the child past a limit, and records a typed failure. pdf.js
// is loaded as soon as the child starts, before its document arrives (the parent keeps one child
// waiting).

interface ExtractJob {
  kind: 'extract';
  /** The PDF: the path of a file the parent wrote and removes (pdf.js reads it in ranges), or its bytes. */
  source: string | Uint8Array;
  maxPages: number;
  /** Only these pages (a range of a large document's fan-out), or the first range of this many pages at most; all when absent. */
  range?: PageRange;
  firstRangeOf?: number;
  content: ContentLimits;
  /** The same bytes passed the content check already (the first range's, before the others were sent). */
  contentChecked?: boolean;
}

interface RenderJob {
  kind: 'render';
  /** As ExtractJob's. */
  source: string | Uint8Array;
  dpi: number;
  /** What one image may cost: a page holding a costlier one is unreadable. */
  imageBudget: ImageBudget;
  format?: 'pgm' | 'png';
  keep?: KeptImage;
}

/** A document of another format (or not yet known to be a PDF): detected and read whole. */
interface ReadJob {
  kind: 'read';
  /** The path of a file the parent wrote and removes. */
  source: string;
  limits: ReaderLimits;
}

export type ChildJob = ExtractJob | RenderJob | ReadJob;

/** What the parent asks of a drawing child once the document is open. */
export type ChildRequest = { type: 'draw'; page: number } | { type: 'close' };

export type ChildMessage =
  | { type: 'ready'; pages: number }
  | { type: 'page'; page: number; text: string; verdict: TextVerdict; layout?: PageLayout; blocks?: PageBlock[] }
  | { type: 'done'; result: ExtractResult }
  /** A read job's answer: the format its bytes are, and its parts (none for a PDF: read as one). */
  | { type: 'document'; format: DocumentFormat; parts: DocumentPart[] }
  | ({ type: 'image' } & RenderedPage)
  /** The page draws nothing (no text, path, shading or image): nothing to recognise. */
  | { type: 'empty'; page: number }
  /** The page could not be drawn (damaged): the others still are. */
  | { type: 'unreadable'; page: number; message: string }
  | { type: 'failed'; reason: FailureReason; message: string }
  | { type: 'error'; message: string };

const send = (message: ChildMessage) =>
  new Promise<void>((resolve, reject) =>
    process.send!(message, undefined, {}, (err) => (err ? reject(err) : resolve())),
  );

/** Read by the bundled pdf.js worker: image data is left unread while text is read (pdfjs-worker-patch.ts). */
function textOnly(on: boolean): void {
  (globalThis as { pdfjsTextOnly?: boolean }).pdfjsTextOnly = on;
}

async function extract(job: ExtractJob): Promise<void> {
  textOnly(true);
  const source = typeof job.source === 'string' ? job.source : plain(job.source);
  if (!job.contentChecked) checkContentBudget(source, job.content);
  const result = await extractText(source, {
    maxPages: job.maxPages,
    range: job.range,
    firstRangeOf: job.firstRangeOf,
    onDocument: (pages) => send({ type: 'ready', pages }),
    onPage: (page, text, verdict, layout, blocks) => send({ type: 'page', page, text, verdict, layout, blocks }),
  });
  await send({ type: 'done', result });
}

async function render(job: RenderJob): Promise<void> {
  textOnly(false);
  const source = typeof job.source === 'string' ? job.source : plain(job.source);
  const doc = await openForDrawing(source, {
    dpi: job.dpi,
    imageBudget: job.imageBudget,
    format: job.format,
    keep: job.keep,
  });
  await send({ type: 'ready', pages: doc.pages });
  // Requests are served one at a time, in order: the parent asks for a page once it can take it.
  let queue = Promise.resolve();
  await new Promise<void>((closed, failed) => {
    process.on('message', (request: ChildRequest) => {
      queue = queue
        .then(async () => {
          if (request.type === 'close') return closed();
          const image = await doc.draw(request.page).catch(async (err: unknown) => {
            if (err instanceof PermanentFailure) throw err; // a bound: the document fails
            await send({ type: 'unreadable', page: request.page, message: asError(err).message });
            return null;
          });
          if (image === null) return;
          await send(image ? { type: 'image', ...image } : { type: 'empty', page: request.page });
        })
        .catch(failed);
    });
  });
  await doc.close();
}

/** A plain view: a Buffer arrives as a Buffer, which pdf.js refuses. */
const plain = (data: Uint8Array) => new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

async function read(job: ReadJob): Promise<void> {
  const bytes = await readFile(job.source);
  const document = await readDocument(bytes, job.limits);
  await send({ type: 'document', ...document });
}

async function run(job: ChildJob): Promise<void> {
  try {
    if (job.kind === 'render') await render(job);
    else if (job.kind === 'read') await read(job);
    else {
      await extract(job);
      // Text read: wait for the next document (the parent decides whether this child reads it).
      process.once('message', (next: ChildJob) => void run(next));
      return;
    }
  } catch (err) {
    await send(
      err instanceof PermanentFailure || err instanceof ReadRefused
        ? { type: 'failed', reason: err.reason, message: err.message }
        : { type: 'error', message: asError(err).message },
    ).catch(() => undefined);
  }
  process.exit(0);
}

if (process.send) {
  // Loaded while the child waits for its document (bounded-child.ts keeps one child warm); a
  // failure here is met again, and reported, when the job loads it. The compile cache is written
  // at once: the parent kills the child as soon as it has answered, before any exit hook runs.
  loadPdfjs()
    .then(() => flushCompileCache())
    .catch(() => undefined);
  process.once('message', (job: ChildJob) => void run(job));
  process.once('disconnect', () => process.exit(0)); // the parent gave up on us
}
