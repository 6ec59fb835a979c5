import * as z from '../zod.ts';
import { doneSchema, byId, pageOf, type NamedSchemas, type RouteContracts } from '../openapi/contract.ts';
import { example, EXAMPLE_IDS as ids, EXAMPLE_TIME as at } from '../openapi/examples.ts';
import {
  LOCAL_BUCKET,
  UPLOAD_CONTENT_TYPES,
  createUploadBody,
  fileIdParams,
  ingestPdfBody,
  failureSchema,
  int,
  completeMultipartBody,
  progressSchema,
  embeddingsDataSchema,
  FILE_STATUS_EXAMPLE,
  listUploadsQuery,
  pdfPageParams,
  pdfPageResponse,
  partLocationSchema,
  filePartParams,
  filePartResponse,
} from './schemas.ts';

// The OpenAPI contracts of the files routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

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

const completedUpload = z
  .object({ fileId: z.string(), status: z.literal('uploaded'), size: int() })
  .check(example({ fileId: ids.file, status: 'uploaded', size: 20971520 }));

const ingestResponse = z
  .object({ embeddingsData: embeddingsDataSchema })
  .check(example({ embeddingsData: FILE_STATUS_EXAMPLE }));

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
    ...byId(fileIdParams, 409),
    body: completeMultipartBody,
    responses: { 200: completedUpload },
  },
  'list-uploads': {
    summary: "The caller's files with their status, newest first",
    query: listUploadsQuery,
    ...pageOf(embeddingsDataSchema),
    errors: [400, 401],
  },
  'delete-upload': {
    summary: 'Delete an uploaded file, its chunks, embeddings and attachments',
    ...byId(fileIdParams),
    responses: { 200: doneSchema({ fileId: ids.file }) },
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
    ...byId(fileIdParams),
    responses: { 200: ingestResponse },
  },
  'get-pdf-page': {
    summary: "One page of a completed file: its text (what sources' charStart/charEnd index) and an image of it",
    description:
      "Owner only (another user's file is 404, like every per-file route). A page the file does not have is 404; a file that is not " +
      'completed is 409 FILE_NOT_READY. The image is drawn on the first request and kept until the file is deleted or ingested again; ' +
      'a page that cannot be drawn within the bounds of the function that draws it (an image costlier than its memory affords, its time ' +
      'per page) is 409 PAGE_NOT_DRAWABLE, remembered: later requests answer the same without drawing again. Limited per user ' +
      '(RATE_LIMIT_PAGES_PER_MINUTE).',
    ...byId(pdfPageParams, 409, 429),
    responses: { 200: pdfPageResponse },
  },
  'get-file-part': {
    summary: "One part of a completed file, any format: its place and its text (what sources' charStart/charEnd index)",
    description:
      "Owner only (another user's file is 404). A part the file does not have is 404; a file that is not completed is 409 " +
      'FILE_NOT_READY. A PDF page adds imageUrl, drawn as GET /message/pdf/{fileId}/pages/{page} draws it (409 PAGE_NOT_DRAWABLE ' +
      'when it cannot be). Limited per user (RATE_LIMIT_PAGES_PER_MINUTE).',
    ...byId(filePartParams, 409, 429),
    responses: { 200: filePartResponse },
  },
};
