import * as z from '../zod.ts';
import { cuidSchema, idParam, pageQuerySchema } from '../schemas.ts';
import type { NamedSchemas, RouteContracts } from '../openapi/contract.ts';
import { downloadCauses, failureReasons } from './failures.ts';
import { pipelineStageNames } from './stages.ts';
import { DOCUMENT_FORMATS } from '../readers/reader.ts';
import { example, EXAMPLE_IDS as ids, EXAMPLE_TIME as at } from '../openapi/examples.ts';

const LOCAL_BUCKET = 'http://localhost:3000/s3/chat-service-files/uploads';

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
    url: z
      .string()
      .check(
        z.trim(),
        z.minLength(1),
        z.maxLength(4096),
        z.describe('http(s) URL of the PDF; the downloadUrl of POST /upload works'),
      ),
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

const failureSchema = z
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

const uploadResponse = z
  .object({
    fileId: z.string(),
    fileName: z.string(),
    contentType: z.enum(UPLOAD_CONTENT_TYPES),
    size: z.number().check(z.int()),
    status: z.literal('uploaded'),
    uploadUrl: z.string().check(z.describe('Presigned S3 URL: PUT the PDF bytes here')),
    uploadMethod: z.literal('PUT'),
    uploadHeaders: z.record(z.string(), z.string()).check(z.describe('Headers the PUT must carry (they are signed)')),
    downloadUrl: z.string().check(z.describe('Presigned GET URL of the upload: usable as `url` in POST /message/pdf')),
    expiresIn: z.number().check(z.int(), z.describe('Seconds both URLs stay valid')),
    createdAt: z.iso.datetime(),
  })
  .check(
    example({
      fileId: ids.file,
      fileName: 'paper.pdf',
      contentType: 'application/pdf',
      size: 1016315,
      status: 'uploaded',
      uploadUrl: `${LOCAL_BUCKET}/${ids.user}/${ids.file}.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost&X-Amz-Signature=…`,
      uploadMethod: 'PUT',
      uploadHeaders: { 'content-type': 'application/pdf' },
      downloadUrl: `${LOCAL_BUCKET}/${ids.user}/${ids.file}.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&X-Amz-Signature=…`,
      expiresIn: 3600,
      createdAt: at,
    }),
  );

const int = () => z.number().check(z.int());

const PART_URL = `${LOCAL_BUCKET}/${ids.user}/${ids.file}.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&partNumber=1&uploadId=…&X-Amz-SignedHeaders=content-length%3Bhost&X-Amz-Signature=…`;

const multipartUploadResponse = z
  .object({
    fileId: z.string(),
    fileName: z.string(),
    contentType: z.enum(UPLOAD_CONTENT_TYPES),
    size: int(),
    status: z.literal('uploaded'),
    partSize: int().check(z.describe('Bytes in each part but the last (UPLOAD_PART_BYTES)')),
    parts: z
      .array(z.object({ partNumber: int(), size: int(), url: z.string() }))
      .check(
        z.describe(
          'A presigned PUT per part: send exactly `size` bytes of the file from (partNumber - 1) × partSize, keep the ETag header of each answer',
        ),
      ),
    uploadMethod: z.literal('PUT'),
    downloadUrl: z
      .string()
      .check(z.describe('Presigned GET URL of the upload once completed: usable as `url` in POST /message/pdf')),
    expiresIn: int().check(z.describe('Seconds the URLs stay valid')),
    createdAt: z.iso.datetime(),
  })
  .check(
    example({
      fileId: ids.file,
      fileName: 'scans.pdf',
      contentType: 'application/pdf',
      size: 20971520,
      status: 'uploaded',
      partSize: 16777216,
      parts: [
        { partNumber: 1, size: 16777216, url: PART_URL },
        { partNumber: 2, size: 4194304, url: PART_URL.replace('partNumber=1', 'partNumber=2') },
      ],
      uploadMethod: 'PUT',
      downloadUrl: `${LOCAL_BUCKET}/${ids.user}/${ids.file}.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&X-Amz-Signature=…`,
      expiresIn: 3600,
      createdAt: at,
    }),
  );

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

const completedUpload = z
  .object({ fileId: z.string(), status: z.literal('uploaded'), size: int() })
  .check(example({ fileId: ids.file, status: 'uploaded', size: 20971520 }));

const doneOfTotal = (what: string) =>
  z.object({
    done: int().check(z.describe(`${what} done`)),
    total: z.optional(int()).check(z.describe(`${what} in all, once known`)),
  });

const progressSchema = z
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

const ingestResponse = z
  .object({ embeddingsData: embeddingsDataSchema })
  .check(example({ embeddingsData: FILE_STATUS_EXAMPLE }));

export const listUploadsQuery = pageQuerySchema;

export const pdfPageParams = z.strictObject({
  fileId: idParam('file'),
  page: z
    .string()
    .check(
      z.regex(/^[1-9]\d{0,5}$/, 'Must be a page number (1, 2, …)'),
      z.describe('1-based page number'),
      example('2'),
    ),
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
  part: z
    .string()
    .check(
      z.regex(/^[1-9]\d{0,5}$/, 'Must be a part number (1, 2, …)'),
      z.describe('1-based part number'),
      example('4'),
    ),
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

/** The named component schemas of the OpenAPI document. */
export const schemas: NamedSchemas = {
  FileStatus: embeddingsDataSchema,
  IngestionProgress: progressSchema,
  IngestionFailure: failureSchema,
  Upload: uploadResponse,
  IngestResult: ingestResponse,
  CreateUploadRequest: createUploadBody,
  MultipartUpload: multipartUploadResponse,
  CompleteMultipartUploadRequest: completeMultipartBody,
  IngestPdfRequest: ingestPdfBody,
  PdfPage: pdfPageResponse,
  FilePart: filePartResponse,
  PartLocation: partLocationSchema,
};

export const contracts: RouteContracts = {
  'create-upload': {
    summary: 'Create a file record and presigned URLs to upload a PDF',
    description:
      'PUT the bytes to uploadUrl with uploadHeaders, then POST /message/pdf with { url: downloadUrl, fileId }. size above PDF_MAX_BYTES is 400.',
    body: createUploadBody,
    responses: { 201: uploadResponse },
    errors: [400, 401, 429],
  },
  'create-multipart-upload': {
    summary: 'Create a file record and a multipart upload for a large PDF, with a presigned URL per part',
    description:
      'PUT each part to its url (exactly its size bytes), keep the ETag each answers, then POST /upload/{fileId}/complete with them, ' +
      'then POST /message/pdf with { url: downloadUrl, fileId }. size above PDF_MAX_BYTES is 400. DELETE /upload/{fileId} aborts an upload not completed.',
    body: createUploadBody,
    responses: { 201: multipartUploadResponse },
    errors: [400, 401, 429],
  },
  'complete-multipart-upload': {
    summary: 'Complete a multipart upload with the ETags of its parts',
    description:
      'Every part, partNumber 1 to n in order (400 PARTS_MISMATCH otherwise; 400 with the storage’s code when it refuses them). ' +
      '409 when the file has no multipart upload in progress (completed already, or a single PUT upload).',
    params: fileIdParams,
    body: completeMultipartBody,
    responses: { 200: completedUpload },
    errors: [400, 401, 404, 409],
  },
  'list-uploads': {
    summary: "The caller's files with their status, newest first",
    query: listUploadsQuery,
    responses: { 200: z.array(embeddingsDataSchema) },
    errors: [400, 401],
    headers: ['x-next-cursor'],
  },
  'delete-upload': {
    summary: 'Delete an uploaded file, its chunks, embeddings and attachments',
    params: fileIdParams,
    responses: {
      200: z
        .object({ fileId: z.string(), deleted: z.literal(true) })
        .check(example({ fileId: ids.file, deleted: true })),
    },
    errors: [400, 401, 404],
  },
  'ingest-pdf': {
    summary: 'Ingest a PDF: size check, download, extract, chunk, embed, store',
    description:
      'The URL is checked (http/https, public addresses only) and its size probed at once (400 when too large or when the check fails). ' +
      'Then the pipeline runs; the call waits up to PDF_SYNC_WAIT_MS: 200 when completed, 202 with status processing otherwise ' +
      '(poll GET /message/pdf/{fileId}). A file that is processing or completed is not ingested again unless force is true. ' +
      'Pages without usable text (scans, fonts without a Unicode map) are read by OCR when OCR_ENABLED. ' +
      'A document that cannot be used (NOT_PDF, ENCRYPTED, NO_TEXT_LAYER, UNREADABLE_TEXT, TOO_LARGE, TOO_MANY_PAGES, TOO_COMPLEX) is 400; a download, ' +
      'embedding or processing failure is 500; both carry the reason in errors[0].code. A caller with ' +
      'PDF_MAX_IN_FLIGHT_PER_USER ingestions already in progress gets 202 at once with embeddingsData.queued (its place in the caller’s queue); ' +
      'with PDF_MAX_QUEUED_PER_USER waiting as well, 429 INGESTION_QUEUE_FULL with Retry-After.',
    body: ingestPdfBody,
    responses: { 200: ingestResponse, 202: ingestResponse },
    errors: [400, 401, 404, 409, 429, 500],
  },
  'get-pdf-status': {
    summary: 'Status of a PDF ingestion',
    params: fileIdParams,
    responses: { 200: ingestResponse },
    errors: [400, 401, 404],
  },
  'get-pdf-page': {
    summary: "One page of a completed file: its text (what sources' charStart/charEnd index) and an image of it",
    description:
      "Owner only (another user's file is 404, like every per-file route). A page the file does not have is 404; a file that is not " +
      'completed is 409 FILE_NOT_READY. The image is drawn on the first request and kept until the file is deleted or ingested again; ' +
      'a page that cannot be drawn within the bounds of the function that draws it (an image costlier than its memory affords, its time ' +
      'per page) is 409 PAGE_NOT_DRAWABLE, remembered: later requests answer the same without drawing again. Limited per user ' +
      '(RATE_LIMIT_PAGES_PER_MINUTE).',
    params: pdfPageParams,
    responses: { 200: pdfPageResponse },
    errors: [400, 401, 404, 409, 429],
  },
  'get-file-part': {
    summary: "One part of a completed file, any format: its place and its text (what sources' charStart/charEnd index)",
    description:
      "Owner only (another user's file is 404). A part the file does not have is 404; a file that is not completed is 409 " +
      'FILE_NOT_READY. A PDF page adds imageUrl, drawn as GET /message/pdf/{fileId}/pages/{page} draws it (409 PAGE_NOT_DRAWABLE ' +
      'when it cannot be). Limited per user (RATE_LIMIT_PAGES_PER_MINUTE).',
    params: filePartParams,
    responses: { 200: filePartResponse },
    errors: [400, 401, 404, 409, 429],
  },
};
