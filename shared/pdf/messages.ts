import * as z from '../zod.ts';
import { cuidSchema } from '../http/schemas.ts';

// Bodies of the pipeline's SQS messages: ids and S3 keys only, never document text (SQS caps a
// message at 256 KB). Validated on receipt like any other input.

const s3KeySchema = z.string().check(z.minLength(1), z.maxLength(1024));

export const fetchMessageSchema = z.strictObject({ fileId: cuidSchema, runId: cuidSchema });
export const extractMessageSchema = z.strictObject({ fileId: cuidSchema, runId: cuidSchema, key: s3KeySchema });
export const embedMessageSchema = z.strictObject({
  fileId: cuidSchema,
  runId: cuidSchema,
  part: z.number().check(z.int(), z.gte(0)),
  key: s3KeySchema,
});

export type FetchMessage = z.infer<typeof fetchMessageSchema>;
export type ExtractMessage = z.infer<typeof extractMessageSchema>;
export type EmbedMessage = z.infer<typeof embedMessageSchema>;

/** The content of a part file (work/<fileId>/<runId>/part-<n>.json), written by pdf-extract. */
export const partFileSchema = z.object({
  fileId: cuidSchema,
  runId: cuidSchema,
  part: z.number().check(z.int(), z.gte(0)),
  chunks: z.array(
    z.object({
      index: z.number().check(z.int(), z.gte(0)),
      text: z.string(),
      page: z.number().check(z.int(), z.gte(1)),
      pageEnd: z.number().check(z.int(), z.gte(1)),
      pageStarts: z.array(z.tuple([z.number().check(z.int(), z.gte(0)), z.number().check(z.int(), z.gte(1))])),
      tokens: z.number().check(z.int(), z.gte(0)),
    }),
  ),
});
export type PartFile = z.infer<typeof partFileSchema>;
