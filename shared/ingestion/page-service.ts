import '../config/pdf.ts';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import * as z from '../zod.ts';
import type { Config } from '../config.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { PermanentFailure } from '../files/failures.ts';
import { logger } from '../observability/logger.ts';
import type { FileRepository } from '../files/file-repository.ts';
import { isDeletedFile } from '../files/file-record.ts';
import { fileNotFound, ownedFile } from '../files/file-status.ts';
import { partLocationSchema, type FilePart, type PdfPage } from '../files/schemas.ts';
import {
  keptSourceKey,
  pageBlockKey,
  pageBlockOf,
  pageDrawFailureKey,
  pageImageKey,
  pageTextKey,
  type FileStorage,
} from '../files/storage.ts';
import type { PartLocation } from '../readers/reader.ts';
import { renderPagesBounded, type RenderLimits } from '../pdf/ocr/bounded-render.ts';
import { localCopy } from './local-copy.ts';

// GET /message/pdf/{fileId}/pages/{page}: a page a reader checks a citation on. Its text is the one
// ingestion stored (what sources' charStart/charEnd index); its image is drawn from the run's kept
// PDF on the first request, in the bounded pdf.js child (time, memory, image budget), and kept
// beside the text, so a second request only signs a URL (docs/DECISIONS.md "Citation positions").
// A page OCR drew holding a large image has its image kept already (pdf-ocr's `keep`).
// A page that cannot be drawn within those bounds is remembered as such beside it, so no later
// request draws it again (docs/DECISIONS.md "Bounds where the cost is").

/** What ingestion stores for each page it read (vectors/<fileId>/<runId>/page-<n>.json). */
export const storedPageSchema = z.object({
  page: z.number().check(z.int(), z.gte(1)),
  /** Size in PDF points as displayed. */
  width: z.number(),
  height: z.number(),
  text: z.string(),
  /** A part of another format than PDF: where it is (a PDF's page is its number). */
  location: z.optional(partLocationSchema),
});
export type StoredPage = z.infer<typeof storedPageSchema>;

export interface PageServiceDeps {
  files: FileRepository;
  storage: FileStorage;
  /** The presigning client. */
  s3: S3Client;
  settings: { dpi: number; limits: RenderLimits; urlTtlSeconds: number };
  /** Told each time a page is drawn (tests and metrics). */
  onDrawn?: (fileId: string, page: number) => void;
}

/**
 * The memory of the functions that draw pages (get-pdf-page, get-file-part): their deployment
 * (infra/deployment/http.ts) gives them this, and the drawing child's bounds are shares of it. As
 * pdf-ocr's: the page a citation points at may be a book's cover, one 93 M pixel photograph.
 */
export const PAGE_FUNCTION_MEMORY_MB = 3008;

/** The drawing child's bounds: a share of the function's memory (which decides the largest image a page may hold); OCR's time per page. */
export function pageRenderLimits(c: Config, memoryMb: number): RenderLimits {
  return {
    heapMb: Math.floor(memoryMb * 0.5),
    rssMb: Math.floor(memoryMb * 0.75),
    pageMs: c.OCR_PAGE_MS,
    documentMs: c.OCR_PAGE_MS + 10_000,
    maxImagePixels: c.OCR_MAX_IMAGE_PIXELS,
  };
}

const decodePage = (bytes: Uint8Array): StoredPage =>
  storedPageSchema.parse(JSON.parse(Buffer.from(bytes).toString('utf8')));
const pageBlockSchema = z.object({ pages: z.array(storedPageSchema) });

/** The page as ingestion kept it: in the text layer's block, the OCR block, or on its own (drawn before); undefined when none. */
async function storedPage(storage: FileStorage, fileId: string, runId: string, page: number) {
  const block = pageBlockOf(page);
  const objects = await Promise.all([
    storage.getIfExists(pageBlockKey(fileId, runId, block, 'text')),
    storage.getIfExists(pageBlockKey(fileId, runId, block, 'ocr')),
  ]);
  for (const bytes of objects) {
    if (!bytes) continue;
    const found = pageBlockSchema
      .parse(JSON.parse(Buffer.from(bytes).toString('utf8')))
      .pages.find((p) => p.page === page);
    if (found) return found;
  }
  const single = await storage.getIfExists(pageTextKey(fileId, runId, page));
  return single ? decodePage(single) : undefined;
}

/** The caller's file (anyone else's: not found), completed (else 409 FILE_NOT_READY). */
async function completedFile(
  deps: Pick<PageServiceDeps, 'files'>,
  input: { userId: string; fileId: string },
  what: string,
) {
  const record = await ownedFile(deps, input);
  if (record.status !== 'completed')
    throw new ConflictError(
      `The file is ${record.status}; its ${what} can be read once GET /message/pdf/{fileId} says completed`,
      'FILE_NOT_READY',
    );
  return record;
}

/**
 * Steps: the caller's file (anyone else's: not found) → completed, else 409 → the page within its
 * page count, else 404 → its stored text → its image, drawn and kept when not there yet → a
 * presigned GET of the image.
 */
export async function getPdfPage(
  deps: PageServiceDeps,
  input: { userId: string; fileId: string; page: number },
): Promise<PdfPage> {
  const record = await completedFile(deps, input, 'pages');
  if (record.format && record.format !== 'pdf')
    throw new NotFoundError(
      `Page not found: the file is not a PDF (${record.format}); read its parts with GET /files/{fileId}/parts/{part}`,
    );
  const pages = record.pages ?? record.pagesTotal ?? 0;
  if (input.page > pages) throw new NotFoundError(`Page not found: the file has ${pages} page(s)`);
  const { runId } = record;
  const textKey = pageTextKey(record.id, runId, input.page);
  const imageKey = pageImageKey(record.id, runId, input.page);
  const [stored, drawn] = await Promise.all([
    storedPage(deps.storage, record.id, runId, input.page),
    deps.storage.exists(imageKey),
  ]);
  let page = stored;
  if (!drawn || !page || !(page.width > 0)) {
    const image = await drawPage(deps, record.id, runId, input.page);
    // A page ingestion kept no text of (unreadable), or no size of: the drawing gives its size.
    const sized = !!page && page.width > 0;
    page = sized ? page! : { page: input.page, width: image.widthPt, height: image.heightPt, text: page?.text ?? '' };
    await Promise.all([
      drawn ? undefined : deps.storage.put(imageKey, image.png, 'image/png'),
      sized ? undefined : deps.storage.put(textKey, JSON.stringify(page), 'application/json'),
    ]);
    // Deleted while drawing: what was just written must not outlive the file (a newer run's
    // completion deletes this run's objects itself).
    if (isDeletedFile(await deps.files.get(record.id))) {
      await deps.storage.deleteKeys(
        [drawn ? undefined : imageKey, sized ? undefined : textKey].filter((k) => k !== undefined),
      );
      throw fileNotFound();
    }
  }
  const imageUrl = await getSignedUrl(deps.s3, new GetObjectCommand({ Bucket: deps.storage.bucket, Key: imageKey }), {
    expiresIn: deps.settings.urlTtlSeconds,
  });
  return { page: input.page, width: page.width, height: page.height, text: page.text, imageUrl };
}

/**
 * Steps: the caller's completed file, as for a page → the part within its count, else 404 → a
 * PDF's page as the page route gives it (its image included), another format's part as ingestion
 * kept it, with its place.
 */
export async function getFilePart(
  deps: PageServiceDeps,
  input: { userId: string; fileId: string; part: number },
): Promise<FilePart> {
  const record = await completedFile(deps, input, 'parts');
  const parts = record.pages ?? 0;
  if (input.part > parts) throw new NotFoundError(`Part not found: the file has ${parts} part(s)`);
  if (!record.format || record.format === 'pdf') {
    const page = await getPdfPage(deps, { ...input, page: input.part });
    return { part: input.part, location: { type: 'page', page: input.part }, text: page.text, imageUrl: page.imageUrl };
  }
  const stored = await storedPage(deps.storage, record.id, record.runId, input.part);
  // Every part read is kept at ingestion; one missing is a lost object, not a part the file lacks.
  if (!stored?.location)
    throw new ConflictError(
      'This part was not kept; ingest the file again: POST /message/pdf with this fileId and "force": true',
      'FILE_DATA_MISSING',
    );
  return { part: input.part, location: stored.location, text: stored.text };
}

const failedDrawSchema = z.object({ message: z.string() });

const notDrawable = (page: number, why: string) =>
  new ConflictError(
    `Page ${page} cannot be drawn: ${why}. Its text is still read and cited in replies`,
    'PAGE_NOT_DRAWABLE',
  );

/**
 * Draws one page of the run's kept PDF as a PNG in the bounded child. A page past the child's
 * bounds (an image costlier than it can afford, its time, its memory) is PAGE_NOT_DRAWABLE, and
 * remembered: the same page meets the same bounds on every request.
 */
async function drawPage(deps: PageServiceDeps, fileId: string, runId: string, page: number) {
  const failureKey = pageDrawFailureKey(fileId, runId, page);
  const failed = await deps.storage.getIfExists(failureKey);
  if (failed) throw notDrawable(page, failedDrawSchema.parse(JSON.parse(Buffer.from(failed).toString('utf8'))).message);
  const remember = async (message: string) => {
    await deps.storage.put(failureKey, JSON.stringify({ message }), 'application/json');
    logger.warn('page not drawable', { fileId, page, message });
    // Deleted while drawing: the note must not outlive the file (as the image, in getPdfPage).
    if (isDeletedFile(await deps.files.get(fileId))) {
      await deps.storage.deleteKeys([failureKey]);
      return fileNotFound();
    }
    return notDrawable(page, message);
  };
  // The PDF as a temporary file the child reads in ranges (docs/DECISIONS.md, Large PDFs).
  const pdf = await localCopy(deps.storage, keptSourceKey(fileId, runId)).catch((err: unknown) => {
    if ((err as { name?: string }).name === 'NoSuchKey') return undefined;
    throw err;
  });
  if (!pdf)
    throw new ConflictError(
      'This file was ingested before page images were kept; ingest it again: POST /message/pdf with this fileId and "force": true',
      'FILE_DATA_MISSING',
    );
  let image: { png: Uint8Array; widthPt: number; heightPt: number } | undefined;
  let unreadable: string | undefined;
  try {
    await renderPagesBounded(pdf.path, [page], {
      dpi: deps.settings.dpi,
      format: 'png',
      limits: deps.settings.limits,
      onPage: (drawn) => {
        if (drawn.image)
          image = { png: drawn.image.pgm, widthPt: drawn.image.widthPt ?? 0, heightPt: drawn.image.heightPt ?? 0 };
        else if (drawn.skipped === 'unreadable') unreadable = drawn.reason;
      },
    });
  } catch (err) {
    // A bound of the drawing child (TOO_COMPLEX); a child that could not start is retried.
    if (err instanceof PermanentFailure)
      throw await remember(err.message.replace(/^The PDF is too complex to process: /, ''));
    throw err;
  } finally {
    await pdf.remove();
  }
  if (!image) throw await remember(unreadable ?? 'the page draws nothing');
  logger.info('page drawn', { fileId, page, bytes: image.png.byteLength });
  deps.onDrawn?.(fileId, page);
  return image;
}

/**
 * A part's text and place only (the MCP tool `read_part`): the checks of getFilePart (the
 * caller's completed file, the part within its count), then what ingestion stored, without
 * drawing a PDF's page.
 */
export interface PartText {
  fileName: string;
  part: number;
  parts: number;
  location: PartLocation;
  text: string;
}

export async function getPartText(
  deps: Pick<PageServiceDeps, 'files' | 'storage'>,
  input: { userId: string; fileId: string; part: number },
): Promise<PartText> {
  const record = await completedFile(deps, input, 'parts');
  const parts = record.pages ?? record.pagesTotal ?? 0;
  if (input.part > parts) throw new NotFoundError(`Part not found: the file has ${parts} part(s)`);
  const stored = await storedPage(deps.storage, record.id, record.runId, input.part);
  return {
    fileName: record.fileName,
    part: input.part,
    parts,
    location: stored?.location ?? { type: 'page', page: input.part },
    text: stored?.text ?? '',
  };
}
