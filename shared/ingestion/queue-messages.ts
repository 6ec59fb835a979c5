import * as z from '../zod.ts';
import { cuidSchema } from '../schemas.ts';

// Bodies of the pipeline's SQS messages: ids and S3 keys only, never document text (SQS caps a
// message at 256 KB). Validated on receipt like any other input.

const int0 = () => z.number().check(z.int(), z.gte(0));
const page = () => z.number().check(z.int(), z.gte(1));
const s3KeySchema = z.string().check(z.minLength(1), z.maxLength(1024));

const partLocationSchema = z.union([
  z.strictObject({ type: z.literal('page'), page: page() }),
  z.strictObject({ type: z.literal('slide'), slide: page(), title: z.optional(z.string()) }),
  z.strictObject({ type: z.literal('sheet'), sheet: z.string(), range: z.string() }),
  z.strictObject({ type: z.literal('section'), path: z.array(z.string()) }),
]);
const chunkPlaceSchema = z.strictObject({
  part: page(),
  location: partLocationSchema,
  rowStarts: z.optional(z.array(z.tuple([int0(), page()]))),
  columns: z.optional(z.tuple([z.string(), z.string()])),
});

export const fetchMessageSchema = z.strictObject({ fileId: cuidSchema, runId: cuidSchema });

export const extractMessageSchema = z.strictObject({
  fileId: cuidSchema,
  runId: cuidSchema,
  key: s3KeySchema,
  /**
   * One range of a large document's pages (1 and up; the first message reads range 0 and sends
   * the others). Absent: the first message.
   */
  range: z.optional(z.strictObject({ index: z.number().check(z.int(), z.gte(1)), first: page(), last: page() })),
});
export const embedMessageSchema = z.strictObject({
  fileId: cuidSchema,
  runId: cuidSchema,
  part: z.number().check(z.int(), z.gte(0)),
  key: s3KeySchema,
});

export const ocrMessageSchema = z.strictObject({
  fileId: cuidSchema,
  runId: cuidSchema,
  /** The PDF (the same object pdf-extract read). */
  key: s3KeySchema,
  /** Which range of the run's OCR pages this is (0-based); ranges are counted once each. */
  range: z.number().check(z.int(), z.gte(0)),
  pages: z.array(z.number().check(z.int(), z.gte(1))).check(z.minLength(1), z.maxLength(100)),
});

export type FetchMessage = z.infer<typeof fetchMessageSchema>;
export type ExtractMessage = z.infer<typeof extractMessageSchema>;
export type EmbedMessage = z.infer<typeof embedMessageSchema>;
export type OcrMessage = z.infer<typeof ocrMessageSchema>;

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
      /** Pages of this chunk whose text was recognised by OCR. */
      ocrPages: z.optional(z.array(z.number().check(z.int(), z.gte(1)))),
      /** The heading path the chunk sits under. */
      section: z.optional(z.string()),
      sectionStarts: z.optional(z.array(z.tuple([z.number().check(z.int(), z.gte(0)), z.string()]))),
      /** Stretches of the chunk that are verbatim stretches of a page's text, and where they are drawn. */
      runs: z.optional(z.array(z.tuple([int0(), int0(), z.number().check(z.int(), z.gte(1)), int0()]))),
      spans: z.optional(z.array(z.number().check(z.int()))),
      places: z.optional(z.array(chunkPlaceSchema)),
    }),
  ),
});
export type PartFile = z.infer<typeof partFileSchema>;

/** What pdf-extract read in one range of a large document (work/<fileId>/<runId>/extract-<range>.json). */
export const extractRangeResultSchema = z.object({
  range: int0(),
  /** Pages read with usable text, and pages pdf.js could not read. */
  textPages: int0(),
  failedPages: int0(),
  /** Pages without usable text (for OCR), and how many of them had text that was not usable. */
  unusable: z.array(page()),
  garbled: int0(),
  /** The range's chunks, numbered from 0 (the run's last range numbers them after the ranges before). */
  chunks: partFileSchema.shape.chunks,
});
export type ExtractRangeResult = z.infer<typeof extractRangeResultSchema>;

/** What pdf-ocr recognised in one range (work/<fileId>/<runId>/ocr-<range>.json). */
export const ocrResultSchema = z.object({
  range: z.number().check(z.int(), z.gte(0)),
  pages: z.array(
    z.object({
      page: z.number().check(z.int(), z.gte(1)),
      /** Normalised text; '' when nothing usable was recognised. */
      text: z.string(),
      /** Why the recognised text was not usable ('empty': nothing on the page). */
      unusable: z.optional(z.string()),
      /** Where the text is drawn (shared/pdf/positions.ts PageLayout). */
      layout: z.optional(z.object({ width: z.number(), height: z.number(), spans: z.array(z.number()) })),
    }),
  ),
});
export type OcrResult = z.infer<typeof ocrResultSchema>;
