import * as z from '../zod.ts';
import { cuidSchema, idParam, pageQuerySchema, urlField } from '../schemas.ts';
import { downloadCauses, failureReasons } from './failures.ts';
import { pipelineStageNames } from './stages.ts';
import { DOCUMENT_FORMATS } from '../readers/reader.ts';
import { example, EXAMPLE_IDS as ids, EXAMPLE_TIME as at } from '../openapi/examples.ts';

export const LOCAL_BUCKET = 'http://localhost:3000/s3/chat-service-files/uploads';

// Document upload and ingestion: request schemas and the shapes the API answers with.

/** Content types POST /upload takes; what is read is decided by the bytes (docs/DECISIONS.md "Documents, not only PDFs"). */
export const UPLOAD_CONTENT_TYPES = [
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'text/html',
  'text/markdown',
  'text/plain',
  'application/octet-stream',
] as const;
export type UploadContentType = (typeof UPLOAD_CONTENT_TYPES)[number];

const FILE_NAME_MAX_CHARS = 255;

export const createUploadBody = z
  .strictObject({
    fileName: z.string().check(
      z.trim(),
      z.minLength(1),
      z.maxLength(FILE_NAME_MAX_CHARS),
      // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is this check's job
      z.refine((s) => !/[\u0000-\u001f\u007f]/.test(s), 'Must not contain control characters'),
    ),
    contentType: z.enum(UPLOAD_CONTENT_TYPES, {
      error: `Must be one of ${UPLOAD_CONTENT_TYPES.join(', ')} (the format is then read from the bytes)`,
    }),
    size: z.number().check(z.int(), z.gte(1), z.describe('Size in bytes; at most PDF_MAX_BYTES (default 25 MiB)')),
  })
  .check(example({ fileName: 'paper.pdf', contentType: 'application/pdf', size: 1016315 }));

export const fileIdParams = z.strictObject({ fileId: idParam('file') });

export const ingestPdfBody = z
  .strictObject({
    url: urlField(4096, 'http(s) URL of the PDF; the downloadUrl of POST /upload works'),
    fileId: cuidSchema.check(z.describe('The id POST /upload returned')),
    chatId: z.optional(cuidSchema).check(z.describe('A file chat of the caller to attach the PDF to')),
    collectionId: z
      .optional(cuidSchema)
      .check(z.describe('A collection of the caller the file joins (POST /collections), before its ingestion starts')),
    force: z.optional(z.boolean()).check(z.describe('Ingest again even when the file is processing or completed')),
  })
  .check(
    example({
      url: `${LOCAL_BUCKET}/${ids.user}/${ids.file}.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&X-Amz-Signature=…`,
      fileId: ids.file,
      chatId: ids.fileChat,
    }),
  );

export const failureSchema = z
  .object({
    reason: z.enum(failureReasons),
    message: z.string(),
    stage: z.optional(z.enum(pipelineStageNames)),
    cause: z
      .optional(z.enum(downloadCauses))
      .check(
        z.describe(
          'DOWNLOAD_FAILED: why. NO_HTTP_ANSWER covers everything before an HTTP answer (unreachable, refused, timed out, not HTTP) on purpose: the service does not tell ports apart',
        ),
      ),
    httpStatus: z
      .optional(z.number().check(z.int()))
      .check(z.describe('cause HTTP_STATUS: the status the server answered')),
  })
  .check(example({ reason: 'NOT_PDF', message: 'The URL did not return a PDF (no %PDF- header)', stage: 'pdf-fetch' }));

export const int = () => z.number().check(z.int());

export const completeMultipartBody = z
  .strictObject({
    parts: z
      .array(
        z.strictObject({
          partNumber: int().check(z.gte(1), z.lte(10_000)),
          etag: z
            .string()
            .check(z.minLength(1), z.maxLength(1024), z.describe('The ETag header the part’s PUT answered')),
        }),
      )
      .check(z.minLength(1), z.maxLength(10_000)),
  })
  .check(
    example({
      parts: [
        { partNumber: 1, etag: '"7e2c5f1a0b9d4e8f6a3c2b1d0e9f8a7b"' },
        { partNumber: 2, etag: '"0f1e2d3c4b5a69788796a5b4c3d2e1f0"' },
      ],
    }),
  );

const doneOfTotal = (what: string) =>
  z.object({
    done: int().check(z.describe(`${what} done`)),
    total: z.optional(int()).check(z.describe(`${what} in all, once known`)),
  });

export const progressSchema = z
  .object({
    stage: z
      .string()
      .check(z.describe('The stage running: fetch, extract, embed (and any stage the pipeline adds), or done')),
    pages: doneOfTotal('Pages read'),
    ocrPages: z
      .optional(doneOfTotal('Pages recognised by OCR'))
      .check(z.describe('When some pages have no usable text layer: pages recognised by OCR of those to recognise')),
    parts: doneOfTotal('Parts embedded'),
  })
  .check(
    example({ stage: 'ocr', pages: { done: 23, total: 23 }, ocrPages: { done: 8, total: 23 }, parts: { done: 0 } }),
  );

export const embeddingsDataSchema = z.object({
  fileId: z.string(),
  fileName: z.string(),
  status: z.enum(['uploaded', 'processing', 'completed', 'failed']),
  stage: z.optional(z.enum(['fetch', 'extract', 'ocr', 'embed', 'done'])),
  pages: z.optional(int()),
  textPages: z.optional(int()).check(z.describe('Pages whose text layer was usable')),
  ocrPages: z.optional(int()).check(z.describe('Pages whose text was recognised by OCR (set once OCR has finished)')),
  unreadablePages: z
    .optional(int())
    .check(
      z.describe(
        'Pages left without usable text: unusable text layer that OCR could not read, OCR off or over OCR_MAX_PAGES, or damaged',
      ),
    ),
  ocr: z
    .optional(z.object({ ranges: int(), done: int(), pages: z.optional(doneOfTotal('Pages recognised')) }))
    .check(z.describe('While OCR runs: page ranges (and pages) recognised so far, of all')),
  queued: z
    .optional(
      z.object({
        since: z.iso.datetime(),
        place: z.optional(int()).check(z.describe('Its place in your queue of waiting PDFs (1: next)')),
      }),
    )
    .check(
      z.describe(
        'While the PDF waits for one of your ingestions in progress to end (you have PDF_MAX_IN_FLIGHT_PER_USER at once; the rest wait in turn)',
      ),
    ),
  chunks: z.optional(int()),
  format: z
    .optional(z.enum(DOCUMENT_FORMATS))
    .check(z.describe('The format read from the bytes (never from the name or declared type); set once known')),
  parts: z
    .optional(int())
    .check(
      z.describe(
        'Parts the document reads as (GET /files/{fileId}/parts/{part}): pages of a PDF, slides, row ranges of sheets, sections. Embedding progress is in progress.parts',
      ),
    ),
  progress: z
    .optional(progressSchema)
    .check(z.describe('Ingestion progress: stage, pages read of total, parts embedded of total')),
  model: z.optional(z.string()),
  dimensions: z.optional(int()),
  tokens: z.optional(int()),
  size: int(),
  sha256: z.optional(z.string()),
  reusedFrom: z
    .optional(z.string())
    .check(z.describe('The file whose embeddings were copied (same bytes, model and chunker)')),
  chatIds: z.optional(z.array(z.string())),
  collectionIds: z.optional(z.array(z.string())).check(z.describe('The collections the file is in')),
  failure: z.optional(failureSchema),
  timings: z.optional(
    z.object({
      fetchMs: z.optional(z.number()),
      extractMs: z.optional(z.number()),
      embedMs: z.optional(z.number()),
      totalMs: z.optional(z.number()),
    }),
  ),
  startedAt: z.optional(z.iso.datetime()),
  completedAt: z.optional(z.iso.datetime()),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type EmbeddingsData = z.infer<typeof embeddingsDataSchema>;

/** A file read to the end, as GET /message/pdf/{fileId} shows it (also inside ChatWithFiles's example). */
export const FILE_STATUS_EXAMPLE = {
  fileId: ids.file,
  fileName: 'paper.pdf',
  status: 'completed',
  stage: 'done',
  pages: 14,
  textPages: 14,
  ocrPages: 0,
  unreadablePages: 0,
  chunks: 27,
  progress: { stage: 'done', pages: { done: 14, total: 14 }, parts: { done: 1, total: 1 } },
  model: 'text-embedding-3-small',
  dimensions: 1536,
  tokens: 30961,
  size: 1016315,
  sha256: '3662ff519e485810520552bf301d8c3b2b917fd2f83303f4965d7abed367e113',
  chatIds: [ids.fileChat],
  timings: { fetchMs: 180, extractMs: 2350, embedMs: 610, totalMs: 3140 },
  startedAt: at,
  completedAt: '2026-11-24T09:30:03.140Z',
  createdAt: at,
  updatedAt: '2026-11-24T09:30:03.140Z',
} satisfies EmbeddingsData;
// Registered here rather than with example() on the schema: the example is checked against the type the schema defines.
embeddingsDataSchema.register(z.globalRegistry, { examples: [FILE_STATUS_EXAMPLE] });

export const listUploadsQuery = pageQuerySchema;

/** A 1-based number in a path (`{page}`, `{part}`), as digits. */
const ordinalParam = (what: 'page' | 'part', exampleValue: string) =>
  z
    .string()
    .check(
      z.regex(/^[1-9]\d{0,5}$/, `Must be a ${what} number (1, 2, …)`),
      z.describe(`1-based ${what} number`),
      example(exampleValue),
    );

export const pdfPageParams = z.strictObject({
  fileId: idParam('file'),
  page: ordinalParam('page', '2'),
});

const PDF_PAGE_EXAMPLE = {
  page: 2,
  width: 612,
  height: 792,
  text: 'Trace trees cover a program by forming one tree per loop. …',
  imageUrl: `${LOCAL_BUCKET.replace('/uploads', '/vectors')}/${ids.file}/run/page-00002.png?X-Amz-Signature=…`,
};

/** GET /message/pdf/{fileId}/pages/{page}: what a reader needs to check a citation on its page. */
export const pdfPageResponse = z
  .object({
    page: z.number().check(z.int(), z.gte(1)),
    width: z.number().check(z.describe('Page width in PDF points (1/72 inch), as displayed (rotation applied)')),
    height: z.number().check(z.describe('Page height in PDF points, as displayed')),
    text: z
      .string()
      .check(
        z.describe(
          "The page's normalised text: the text sources' charStart/charEnd index ('' for a page without text)",
        ),
      ),
    imageUrl: z
      .string()
      .check(z.describe('Presigned GET URL of a PNG of the page (drawn on the first request, then kept); expires')),
  })
  .check(example(PDF_PAGE_EXAMPLE));
export type PdfPage = z.infer<typeof pdfPageResponse>;

const at1 = () => z.number().check(z.int(), z.gte(1));

/** Where a part (and a source's quote) sits in its document. */
export const partLocationSchema = z
  .union([
    z.strictObject({ type: z.literal('page'), page: at1() }),
    z.strictObject({ type: z.literal('slide'), slide: at1(), title: z.optional(z.string()) }),
    z.strictObject({
      type: z.literal('sheet'),
      sheet: z.string(),
      range: z.string().check(z.describe('A1 range of the rows (a source: the rows its quote is on)')),
    }),
    z.strictObject({
      type: z.literal('section'),
      path: z.array(z.string()).check(z.describe('The headings the text sits under, outermost first')),
    }),
  ])
  .check(
    z.describe(
      'page (PDF), slide (PowerPoint, speaker notes included), sheet and A1 range (Excel), section path (Word, HTML, Markdown, text)',
    ),
    example({ type: 'slide', slide: 4, title: 'Results' }),
  );

export const filePartParams = z.strictObject({
  fileId: idParam('file'),
  part: ordinalParam('part', '4'),
});

/** GET /files/{fileId}/parts/{part}: a part's place and text (what sources' charStart/charEnd index). */
export const filePartResponse = z
  .object({
    part: at1(),
    location: partLocationSchema,
    text: z.string().check(z.describe("The part's normalised text: the sources' charStart/charEnd index")),
    imageUrl: z
      .optional(z.string())
      .check(z.describe('A PDF page: a presigned GET URL of its PNG (as the page route)')),
  })
  .check(
    example({
      part: 4,
      location: { type: 'slide', slide: 4, title: 'Results' },
      text: 'Results Latency fell by 40% … Notes: mention the cache warm-up',
    }),
  );
export type FilePart = z.infer<typeof filePartResponse>;
