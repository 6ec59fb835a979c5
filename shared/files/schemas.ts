import { z } from 'zod';
import { cuidSchema } from '../http/schemas.ts';
import type { RouteContracts } from '../openapi/contract.ts';
import { failureReasons } from '../pdf/failures.ts';

// PDF upload and ingestion: request schemas and the shapes the API answers with.

export const FILE_NAME_MAX_CHARS = 255;

export const createUploadBody = z.strictObject({
  fileName: z
    .string()
    .trim()
    .min(1)
    .max(FILE_NAME_MAX_CHARS)
    .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), 'Must not contain control characters'),
  contentType: z.literal('application/pdf', { error: 'Only application/pdf is accepted' }),
  size: z.number().int().min(1).describe('Size in bytes; at most PDF_MAX_BYTES (default 25 MiB)'),
});

export const fileIdParams = z.strictObject({ fileId: cuidSchema });

export const ingestPdfBody = z.strictObject({
  url: z.string().trim().min(1).max(4096).describe('http(s) URL of the PDF; the downloadUrl of POST /upload works'),
  fileId: cuidSchema.describe('The id POST /upload returned'),
  chatId: cuidSchema.optional().describe('A file chat of the caller to attach the PDF to'),
  force: z.boolean().optional().describe('Ingest again even when the file is processing or completed'),
});

export const failureSchema = z.object({ reason: z.enum(failureReasons), message: z.string() });

export const uploadResponse = z.object({
  fileId: z.string(),
  fileName: z.string(),
  contentType: z.literal('application/pdf'),
  size: z.number().int(),
  status: z.literal('uploaded'),
  uploadUrl: z.string().describe('Presigned S3 URL: PUT the PDF bytes here'),
  uploadMethod: z.literal('PUT'),
  uploadHeaders: z.record(z.string(), z.string()).describe('Headers the PUT must carry (they are signed)'),
  downloadUrl: z.string().describe('Presigned GET URL of the upload: usable as `url` in POST /message/pdf'),
  expiresIn: z.number().int().describe('Seconds both URLs stay valid'),
  createdAt: z.iso.datetime(),
});

export const embeddingsDataSchema = z.object({
  fileId: z.string(),
  fileName: z.string(),
  status: z.enum(['uploaded', 'processing', 'completed', 'failed']),
  stage: z.enum(['fetch', 'extract', 'embed', 'done']).optional(),
  pages: z.number().int().optional(),
  chunks: z.number().int().optional(),
  parts: z.object({ total: z.number().int().optional(), done: z.number().int() }).optional(),
  model: z.string().optional(),
  dimensions: z.number().int().optional(),
  tokens: z.number().int().optional(),
  size: z.number().int(),
  sha256: z.string().optional(),
  reusedFrom: z.string().optional().describe('The file whose embeddings were copied (same bytes, model and chunker)'),
  chatIds: z.array(z.string()).optional(),
  failure: failureSchema.optional(),
  timings: z
    .object({ fetchMs: z.number().optional(), extractMs: z.number().optional(), embedMs: z.number().optional(), totalMs: z.number().optional() })
    .optional(),
  startedAt: z.iso.datetime().optional(),
  completedAt: z.iso.datetime().optional(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type EmbeddingsData = z.infer<typeof embeddingsDataSchema>;

const ingestResponse = z.object({ embeddingsData: embeddingsDataSchema });

export const contracts: RouteContracts = {
  'create-upload': {
    summary: 'Create a file record and presigned URLs to upload a PDF',
    description:
      'PUT the bytes to uploadUrl with uploadHeaders, then POST /message/pdf with { url: downloadUrl, fileId }. size above PDF_MAX_BYTES is 400.',
    body: createUploadBody,
    responses: { 201: uploadResponse },
    errors: [400, 401],
  },
  'delete-upload': {
    summary: 'Delete an uploaded file, its chunks, embeddings and attachments',
    params: fileIdParams,
    responses: { 200: z.object({ fileId: z.string(), deleted: z.literal(true) }) },
    errors: [400, 401, 404],
  },
  'ingest-pdf': {
    summary: 'Ingest a PDF: size check, download, extract, chunk, embed, store',
    description:
      'The URL is checked (http/https, public addresses only) and its size probed at once (400 when too large or when the check fails). ' +
      'Then the pipeline runs; the call waits up to PDF_SYNC_WAIT_MS: 200 when completed, 202 with status processing otherwise ' +
      '(poll GET /message/pdf/{fileId}). A file that is processing or completed is not ingested again unless force is true. ' +
      'A document that cannot be used (NOT_PDF, ENCRYPTED, NO_TEXT_LAYER, TOO_LARGE, TOO_MANY_PAGES) is 400; a download, ' +
      'embedding or processing failure is 500; both carry the reason in errors[0].code.',
    body: ingestPdfBody,
    responses: { 200: ingestResponse, 202: ingestResponse },
    errors: [400, 401, 404, 500],
  },
  'get-pdf-status': {
    summary: 'Status of a PDF ingestion',
    params: fileIdParams,
    responses: { 200: ingestResponse },
    errors: [400, 401, 404],
  },
};
