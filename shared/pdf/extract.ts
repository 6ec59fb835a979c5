import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PermanentFailure } from '../files/failures.ts';
import { readPageText } from './normalise.ts';
import { layoutOfBlocks, layoutOfItems, type PageLayout } from './positions.ts';
import { cmapsDir } from './pdfjs-data.ts';
import { planRanges, type PageRange } from './page-ranges.ts';
import type { PageBlock } from './layout/page-layout.ts';
import type { TextVerdict } from './text-quality.ts';

// Text per page with pdfjs-dist 6 (legacy build) in Node and in an esbuild bundle:
// the worker runs in-process (registered on globalThis.pdfjsWorker, so no worker file is looked
// up), DOM classes that only rendering uses are stubbed, no font faces, no system fonts,
// and the standard font data comes from a directory (PDFJS_STANDARD_FONTS_DIR, else
// `standard_fonts/` beside the bundle, else the package in node_modules). Pages are read one at a
// time and released, so memory stays bounded by one page plus the document's own structures.

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');

let loading: Promise<PdfJs> | undefined;

/** Stands in for DOMMatrix where pdfjs only needs the class to exist (text extraction never renders; ImageData and Path2D likewise). */
class DOMMatrixStub {
  a = 1;
  b = 0;
  c = 0;
  d = 1;
  e = 0;
  f = 0;
  constructor(init?: number[]) {
    if (Array.isArray(init) && init.length >= 6)
      [this.a, this.b, this.c, this.d, this.e, this.f] = init as [number, number, number, number, number, number];
  }
}

export function loadPdfjs(): Promise<PdfJs> {
  loading ??= (async () => {
    const g = globalThis as Record<string, unknown>;
    g.DOMMatrix ??= DOMMatrixStub;
    g.ImageData ??= class ImageDataStub {};
    g.Path2D ??= class Path2DStub {};
    g.pdfjsWorker ??= await import('pdfjs-dist/legacy/build/pdf.worker.mjs');
    return import('pdfjs-dist/legacy/build/pdf.mjs');
  })();
  return loading;
}

/**
 * Operators that put something on a page: paths painted, shadings, XObjects and inline images,
 * text shown. Read from a page's content while its text is read (the raw operators) and from its
 * operator list before it is drawn (forms inlined, images as their painting operators).
 */
export const PAINTING_OPERATORS = [
  'stroke',
  'closeStroke',
  'fill',
  'eoFill',
  'fillStroke',
  'eoFillStroke',
  'closeFillStroke',
  'closeEOFillStroke',
  'constructPath',
  'rawFillPath',
  'shadingFill',
  'showText',
  'showSpacedText',
  'nextLineShowText',
  'nextLineSetSpacingShowText',
  'paintXObject',
  'beginInlineImage',
  'endInlineImage',
  'paintImageMaskXObject',
  'paintImageMaskXObjectGroup',
  'paintImageXObject',
  'paintInlineImageXObject',
  'paintImageXObjectRepeat',
  'paintImageMaskXObjectRepeat',
  'paintSolidColorImageMask',
] as const;

interface DrawingFlags {
  pdfjsCountsDrawing?: boolean;
  pdfjsDrawingOps?: Set<number>;
  pdfjsPageDraws?: boolean;
}

/**
 * Whether a page without text draws nothing at all, so OCR has nothing to read on it: no painting
 * operator in its content (told by the patched worker while the text was read, see
 * pdfjs-worker-patch.ts) and no annotation. False whenever the worker cannot tell.
 */
async function drawsNothing(page: { getAnnotations(): Promise<unknown[]> }): Promise<boolean> {
  const g = globalThis as DrawingFlags;
  if (!g.pdfjsCountsDrawing || g.pdfjsPageDraws) return false;
  return (await page.getAnnotations()).length === 0;
}

let fontsDir: string | undefined;

/** The directory of pdfjs's standard font data, with a trailing slash. */
export function standardFontsDir(): string {
  if (fontsDir) return fontsDir;
  const candidates = [process.env.PDFJS_STANDARD_FONTS_DIR];
  try {
    candidates.push(join(dirname(fileURLToPath(import.meta.url)), 'standard_fonts')); // beside the bundle
  } catch {
    // import.meta.url is not a file URL: skip
  }
  try {
    candidates.push(join(dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'standard_fonts'));
  } catch {
    // not installed beside us (a bundle): the directory beside the bundle is the one
  }
  const found = candidates.find((d) => d && existsSync(join(d, 'FoxitSans.pfb')));
  fontsDir = `${found ?? candidates.find(Boolean) ?? 'standard_fonts'}/`.replace(/\/+$/, '/');
  return fontsDir;
}

interface ExtractOptions {
  maxPages: number;
  /** Read only these pages (past the end: up to the last); every page when absent. */
  range?: PageRange;
  /** Read only the first of the ranges of this many pages at most the document is split in (page-ranges.ts). */
  firstRangeOf?: number;
  /**
   * Called with each page's normalised text ('' when unusable), the quality verdict on it, where
   * the text is drawn (positions.ts) and its headings and tables if any, in page order (awaited).
   */
  onPage: (
    page: number,
    text: string,
    verdict: TextVerdict,
    layout: PageLayout,
    blocks?: PageBlock[],
  ) => void | Promise<void>;
  /** Called once with the document's page count, before the first page (progress reporting). */
  onDocument?: (pages: number) => void | Promise<void>;
  /** Checked between pages: extraction stops with this error when it returns one. */
  shouldStop?: () => Error | undefined;
}

export interface ExtractResult {
  /** The document's page count (all of it, whatever range was read). */
  pages: number;
  /** Pages with usable text (text-quality.ts). */
  textPages: number;
  /** Pages pdfjs could not read (a damaged file). */
  failedPages: number;
}

/** Bytes pdf.js reads from a file at once. */
const RANGE_CHUNK_BYTES = 256 * 1024;

/**
 * What pdf.js opens: bytes, or a file (a path) read in ranges of RANGE_CHUNK_BYTES as pages need
 * them, never streamed whole (docs/DECISIONS.md, Large PDFs: nothing holds the whole file).
 */
export function documentSource(source: Uint8Array | string) {
  if (typeof source !== 'string') return { data: source };
  return {
    url: pathToFileURL(source),
    disableStream: true,
    disableAutoFetch: true,
    rangeChunkSize: RANGE_CHUNK_BYTES,
  };
}

const errorName = (err: unknown) => (err as { name?: string })?.name ?? '';

/**
 * Reads the text of every page of `source` (bytes, or the path of a file). Throws PermanentFailure
 * for documents that can never be read: ENCRYPTED (a password is needed), NOT_PDF (damaged or not a PDF), TOO_MANY_PAGES. Pages without
 * usable text are reported to onPage with their verdict; what to do with them (OCR, or fail
 * NO_TEXT_LAYER / UNREADABLE_TEXT) is the caller's decision.
 */
export async function extractText(source: Uint8Array | string, options: ExtractOptions): Promise<ExtractResult> {
  const pdfjs = await loadPdfjs();
  const task = pdfjs.getDocument({
    ...documentSource(source),
    disableFontFace: true,
    useSystemFonts: false,
    standardFontDataUrl: standardFontsDir(),
    cMapUrl: cmapsDir(),
    cMapPacked: true,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
    stopAtErrors: false,
  });
  let doc: Awaited<typeof task.promise>;
  try {
    doc = await task.promise;
  } catch (err) {
    await task.destroy().catch(() => undefined);
    if (errorName(err) === 'PasswordException')
      throw new PermanentFailure('ENCRYPTED', 'The PDF is password-protected');
    if (errorName(err) === 'InvalidPDFException')
      throw new PermanentFailure('NOT_PDF', 'The file is damaged or is not a valid PDF');
    throw new PermanentFailure('NOT_PDF', `The PDF could not be read (${errorName(err) || 'unknown error'})`);
  }
  try {
    if (doc.numPages > options.maxPages) {
      throw new PermanentFailure(
        'TOO_MANY_PAGES',
        `The PDF has ${doc.numPages} pages; at most ${options.maxPages} are accepted`,
      );
    }
    await options.onDocument?.(doc.numPages);
    let textPages = 0;
    let failedPages = 0;
    const range =
      options.range ?? (options.firstRangeOf ? planRanges(doc.numPages, options.firstRangeOf)[0] : undefined);
    const first = range?.first ?? 1;
    const last = Math.min(range?.last ?? doc.numPages, doc.numPages);
    for (let n = first; n <= last; n++) {
      const stop = options.shouldStop?.();
      if (stop) throw stop;
      let read: ReturnType<typeof readPageText>;
      let layout: PageLayout;
      try {
        const page = await doc.getPage(n);
        try {
          // pdf.js's NFKC would expand a ligature code point before its right-to-left reversal and
          // so reverse its letters; normalise.ts applies NFKC after the reversal instead.
          const flags = globalThis as DrawingFlags;
          flags.pdfjsDrawingOps ??= new Set(PAINTING_OPERATORS.map((name) => pdfjs.OPS[name]));
          flags.pdfjsPageDraws = false;
          const content = await page.getTextContent({ disableNormalization: true });
          const items = content.items.filter((item) => 'str' in item);
          read = readPageText(items);
          if (!read.verdict.usable && read.verdict.reason === 'empty' && (await drawsNothing(page)))
            read = { ...read, verdict: { usable: false, reason: 'blank' } };
          const viewport = page.getViewport({ scale: 1 });
          layout = read.blocks
            ? layoutOfBlocks(items, viewport, read.text, read.blocks)
            : layoutOfItems(items, viewport, read.text);
        } finally {
          page.cleanup();
        }
      } catch (err) {
        if (err instanceof PermanentFailure) throw err;
        failedPages++;
        continue;
      }
      if (read.verdict.usable) textPages++;
      await options.onPage(n, read.text, read.verdict, layout, read.blocks);
    }
    // A range's unreadable pages are counted by whoever gathers the ranges.
    if (failedPages === doc.numPages)
      throw new PermanentFailure('NOT_PDF', 'The file is damaged: no page could be read');
    return { pages: doc.numPages, textPages, failedPages };
  } finally {
    // pdf.js 6 releases a document through its loading task (PDFDocumentProxy.destroy is gone).
    await task.destroy().catch(() => undefined);
  }
}
