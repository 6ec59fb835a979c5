import * as z from '../zod.ts';
import { settingsPiece } from './core.ts';
import { bool, int, str } from './fields.ts';

// Documents: PDF reading and its bounds, other formats, OCR and the drawing of pages.

export const pdfSettings = settingsPiece({
  // PDF ingestion.
  PDF_MAX_BYTES: z._default(int(1024, 500 * 1024 * 1024), 25 * 1024 * 1024),
  PDF_MAX_PAGES: z._default(int(1, 100_000), 2_000),
  // A document longer than this is read in ranges of this many pages, each its own pdf-extract
  // message (a multiple of 32: the blocks page texts are kept in).
  PDF_EXTRACT_PAGES_PER_RANGE: z._default(int(32, 100_000).check(z.multipleOf(32)), 256),
  PDF_SYNC_WAIT_MS: z._default(int(0, 60_000), 20_000),
  PDF_FETCH_TIMEOUT_MS: z._default(int(100, 15 * 60 * 1000), 60_000),
  // The size check's deadline (one small request, made while the client waits; at most
  // PDF_FETCH_TIMEOUT_MS).
  PDF_PROBE_TIMEOUT_MS: z._default(int(100, 20_000), 5_000),
  PDF_ALLOW_LOOPBACK: z._default(bool, false),
  // Fair downloads: a download slower than the floor (bytes/s, 0 = none) over a whole
  // window is cut; one user holds at most this many ingestions in flight (more get 429).
  PDF_FETCH_MIN_BYTES_PER_SECOND: z._default(int(0, 1024 * 1024 * 1024), 16 * 1024),
  PDF_FETCH_SLOW_WINDOW_MS: z._default(int(100, 15 * 60 * 1000), 5_000),
  // Bounds on reading one document (shared/pdf/bounded-extract.ts): the extraction
  // child's heap and resident size in MB (by default half and 70% of the function's memory),
  // time per page and per document, and the streams and CMaps it may expand to.
  PDF_EXTRACT_HEAP_MB: z.optional(int(32, 16_384)),
  PDF_EXTRACT_RSS_MB: z.optional(int(64, 16_384)),
  PDF_EXTRACT_PAGE_MS: z._default(int(100, 15 * 60 * 1000), 10_000),
  PDF_EXTRACT_DOCUMENT_MS: z._default(int(1000, 15 * 60 * 1000), 120_000),
  PDF_MAX_STREAM_BYTES: z._default(int(1024, 4 * 1024 * 1024 * 1024), 32 * 1024 * 1024),
  PDF_MAX_CONTENT_BYTES: z._default(int(1024, 16 * 1024 * 1024 * 1024), 256 * 1024 * 1024),
  PDF_MAX_CMAP_CODES: z._default(int(256, 2 ** 32), 1024 * 1024),
  // Bounds on reading a document of another format (shared/readers/): a package's entries, the
  // bytes it may inflate to and its ratio per entry (checked before inflating), markup's nesting,
  // a workbook's cells; the child's heap, size and time are the PDF_EXTRACT_* ones.
  DOCUMENT_MAX_ENTRIES: z._default(int(10, 1_000_000), 10_000),
  DOCUMENT_MAX_UNCOMPRESSED_BYTES: z._default(int(1024 * 1024, 16 * 1024 * 1024 * 1024), 512 * 1024 * 1024),
  DOCUMENT_MAX_RATIO: z._default(int(10, 100_000), 200),
  DOCUMENT_MAX_DEPTH: z._default(int(16, 100_000), 512),
  DOCUMENT_MAX_CELLS: z._default(int(1000, 100_000_000), 2_000_000),
  // Where pdfjs's standard font data is (the bundle ships it as standard_fonts/ beside index.mjs).
  PDFJS_STANDARD_FONTS_DIR: z.optional(str()),
  // OCR of pages without usable text (scans, fonts without a Unicode map): tesseract.js with the
  // trained data of @tesseract.js-data/<lang> for each language ("eng", "eng+deu"), pages drawn at
  // OCR_DPI, at most OCR_MAX_PAGES pages per document (the rest are reported unreadable), sent to
  // pdf-ocr in messages of OCR_PAGES_PER_MESSAGE pages, recognised by OCR_WORKERS threads each.
  OCR_ENABLED: z._default(bool, true),
  OCR_MAX_PAGES: z._default(int(0, 100_000), 200),
  OCR_LANGUAGES: z._default(
    z.pipe(
      z
        .string()
        .check(
          z.regex(/^[a-z_]{3,10}(\+[a-z_]{3,10})*$/, 'must be tesseract language codes joined by +, e.g. eng+deu'),
        ),
      z.transform((v) => v.split('+')),
    ),
    ['eng'],
  ),
  OCR_DPI: z._default(int(72, 400), 150),
  OCR_PAGES_PER_MESSAGE: z._default(int(1, 100), 8),
  OCR_WORKERS: z.optional(int(1, 16)),
  // Bounds on drawing pages (shared/pdf/ocr/bounded-render.ts): the drawing child's time per page.
  // Its heap and resident size follow the function's memory, and so does the largest image a page
  // may hold (a costlier one leaves that page unreadable, checked before decoding); OCR_MAX_IMAGE_PIXELS
  // lowers that to a number of pixels when set.
  OCR_PAGE_MS: z._default(int(100, 15 * 60 * 1000), 20_000),
  OCR_MAX_IMAGE_PIXELS: z.optional(int(1, 2 ** 32)),
  // Resolution of the page images GET /message/pdf/{fileId}/pages/{page} draws (same bounds as OCR's drawing).
  PAGE_IMAGE_DPI: z._default(int(36, 300), 110),
  // Where pdfjs's CMaps are (the bundle ships them as cmaps/ beside index.mjs).
  PDFJS_CMAPS_DIR: z.optional(str()),
});
