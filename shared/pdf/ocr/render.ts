import { createRequire } from 'node:module';
import { cmapsDir, wasmDir } from '../pdfjs-data.ts';
import { documentSource, loadPdfjs, PAINTING_OPERATORS, standardFontsDir } from '../extract.ts';
import { PermanentFailure } from '../../files/failures.ts';
import { type ImageBudget, refusal } from './image-budget.ts';

// Pages → grey images for OCR: pdf.js draws each page onto an @napi-rs/canvas canvas (Skia,
// prebuilt for linux-x64 and linux-arm64) at a fixed resolution, white background, and the
// pixels go out as 8-bit greyscale PGM, which Tesseract's image reader (Leptonica) takes without
// a decoder of its own (no PNG compression to pay for). Fonts are drawn as paths (no font faces
// in Node), embedded fonts from the file, the standard ones from pdf.js's font data.

type Canvas = typeof import('@napi-rs/canvas');
let canvasModule: Promise<Canvas> | undefined;

/**
 * @napi-rs/canvas, with its DOM classes installed for pdf.js (replacing the extraction stubs,
 * which cannot draw). Loaded with Node's own require, the way pdf.js loads it for the canvases it
 * makes itself: one instance of the native addon per process, even under a module loader that
 * keeps registries of its own (jest), where a second instance crashes when the two meet.
 */
export function loadCanvas(): Promise<Canvas> {
  canvasModule ??= Promise.resolve(createRequire(import.meta.url)('@napi-rs/canvas') as Canvas).then((c) => {
    const g = globalThis as Record<string, unknown>;
    g.DOMMatrix = c.DOMMatrix;
    g.ImageData = c.ImageData;
    g.Path2D = c.Path2D;
    return c;
  });
  return canvasModule;
}

export interface RenderedPage {
  page: number;
  width: number;
  height: number;
  /** Binary PGM (P5), 8-bit grey; or, drawn with `format: 'png'`, a colour PNG. */
  pgm: Uint8Array;
  /** The page's size in PDF points as displayed (rotation applied). */
  widthPt?: number;
  heightPt?: number;
  /** The page also drawn as a colour PNG for readers (RenderOptions.keep): it holds an image costly to decode. */
  png?: Uint8Array;
}

/** Pixels on the longer side are capped, so a poster-sized page cannot exhaust memory. */
const MAX_SIDE_PX = 5000;
/**
 * Transparency groups one page may draw: each is a scratch canvas the size of what it covers,
 * drawn and composited (about 0.4 ms and 8 MB at 150 dpi for a page-sized one). A fast path
 * before drawing (docs/DECISIONS.md, OCR bounds); the drawing child's time per page is the bound.
 */
const MAX_GROUPS_PER_PAGE = 10_000;

/** RGBA → PGM (luma, Rec. 601 integer weights). */
function rgbaToPgm(rgba: Uint8ClampedArray | Uint8Array, width: number, height: number): Uint8Array {
  const header = new TextEncoder().encode(`P5\n${width} ${height}\n255\n`);
  const out = new Uint8Array(header.length + width * height);
  out.set(header, 0);
  for (let i = 0, o = header.length; i < rgba.length; i += 4, o++) {
    out[o] = (rgba[i]! * 77 + rgba[i + 1]! * 150 + rgba[i + 2]! * 29) >> 8;
  }
  return out;
}

interface RenderOptions {
  /** Resolution in dots per inch (a PDF point is 1/72 inch). */
  dpi: number;
  /** What one image may cost: a page holding a costlier one is not drawn (unreadable); unlimited by default. */
  imageBudget?: ImageBudget;
  /** pgm (OCR, the default) or png (a page shown to a reader: drawn even when blank). */
  format?: 'pgm' | 'png';
  keep?: KeptImage;
}

/**
 * A page holding an image of at least `minImagePixels` is drawn a second time, as a colour PNG at
 * `dpi`, from the image already decoded: drawing it again on a reader's request would decode it
 * again, seconds for a book's cover (docs/DECISIONS.md, Bounds where the cost is).
 */
export interface KeptImage {
  dpi: number;
  minImagePixels: number;
}

/** A page that cannot be drawn within the drawing child's bounds: the others still are. */
class UnreadablePage extends Error {}

/** The Name objects pdf.js gives for a Filter entry (one, or an array), as strings. */
const filterNames = (filter: unknown): string[] =>
  [filter]
    .flat()
    .flatMap((f) => (typeof (f as { name?: unknown })?.name === 'string' ? [(f as { name: string }).name] : []));

type RefuseImage = (width: number, height: number, filter: unknown, bitsPerComponent: unknown) => boolean;

type PdfPage = Awaited<
  ReturnType<Awaited<ReturnType<typeof import('pdfjs-dist/legacy/build/pdf.mjs').getDocument>['promise']>['getPage']>
>;

/** A page's size in pixels at a resolution, its longer side capped. */
function pixelsAt(base: { width: number; height: number }, dpi: number) {
  const scale = Math.min(dpi / 72, MAX_SIDE_PX / Math.max(base.width, base.height, 1));
  return {
    scale,
    width: Math.max(1, Math.floor(base.width * scale)),
    height: Math.max(1, Math.floor(base.height * scale)),
  };
}

/** One drawing of a page at a resolution, on white: its canvas. */
async function drawAt(page: PdfPage, base: { width: number; height: number }, dpi: number) {
  const canvas = await loadCanvas();
  const { scale, width, height } = pixelsAt(base, dpi);
  const viewport = page.getViewport({ scale });
  const target = canvas.createCanvas(width, height);
  const ctx = target.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, width, height);
  type RenderParameters = Parameters<typeof page.render>[0];
  await page.render({
    canvas: target as unknown as RenderParameters['canvas'],
    canvasContext: ctx as unknown as RenderParameters['canvasContext'],
    viewport,
    background: '#ffffff',
  }).promise;
  return target;
}

type DrawnCanvas = Awaited<ReturnType<typeof drawAt>>;

/**
 * The kept PNG at `dpi`: resampled from the drawing already made when that is as fine or finer
 * (pdf.js drawing the page again would scale its large image down again, seconds for a book's
 * cover), else drawn again.
 */
async function keptPng(page: PdfPage, base: { width: number; height: number }, drawn: DrawnCanvas, dpi: number) {
  const { width, height } = pixelsAt(base, dpi);
  if (width > drawn.width) return (await drawAt(page, base, dpi)).encode('png');
  const resampled = (await loadCanvas()).createCanvas(width, height);
  resampled.getContext('2d').drawImage(drawn, 0, 0, width, height);
  return resampled.encode('png');
}

interface OpenDocument {
  pages: number;
  /** Draws one page (1-based); undefined when the page draws nothing (nothing to recognise). */
  draw(n: number): Promise<RenderedPage | undefined>;
  close(): Promise<void>;
}

/**
 * Opens a PDF for drawing its pages one at a time (memory: one page's pixels). pdf.js gets its
 * WebAssembly decoders (wasmUrl: JBIG2, CCITT fax, JPX), so black-and-white scans are drawn.
 */
export async function openForDrawing(source: Uint8Array | string, options: RenderOptions): Promise<OpenDocument> {
  await loadCanvas(); // its DOM classes, before pdf.js opens the document
  const pdfjs = await loadPdfjs();
  const drawing = new Set<number>(PAINTING_OPERATORS.map((name) => pdfjs.OPS[name]));
  const task = pdfjs.getDocument({
    // Bytes are copied: pdf.js transfers (detaches) the buffer it is given. A path is read in ranges.
    ...documentSource(typeof source === 'string' ? source : source.slice()),
    disableFontFace: true,
    useSystemFonts: false,
    standardFontDataUrl: standardFontsDir(),
    cMapUrl: cmapsDir(),
    cMapPacked: true,
    wasmUrl: wasmDir(),
    verbosity: pdfjs.VerbosityLevel.ERRORS,
    stopAtErrors: false,
  });
  const doc = await task.promise.catch(async (err: unknown) => {
    await task.destroy().catch(() => undefined);
    throw err;
  });
  // Images refused while the page's operator list is built (pdfjs-worker-patch.ts), before decoding.
  const refused: string[] = [];
  let largestImage = 0;
  const { imageBudget } = options;
  (globalThis as { pdfjsRefuseImage?: RefuseImage }).pdfjsRefuseImage = imageBudget
    ? (width, height, filter, bitsPerComponent) => {
        largestImage = Math.max(largestImage, width * height);
        const why = refusal(
          {
            width,
            height,
            filters: filterNames(filter),
            bitsPerComponent: typeof bitsPerComponent === 'number' ? bitsPerComponent : undefined,
          },
          imageBudget,
        );
        if (why) refused.push(why);
        return why !== undefined;
      }
    : undefined;
  return {
    pages: doc.numPages,
    async draw(n) {
      const page = await doc.getPage(n);
      try {
        refused.length = 0;
        largestImage = 0;
        const operators = await page.getOperatorList();
        if (refused.length) throw new UnreadablePage(refused[0]);
        if (options.format !== 'png' && !operators.fnArray.some((fn) => drawing.has(fn))) return undefined;
        const groups = operators.fnArray.reduce((n, fn) => (fn === pdfjs.OPS.beginGroup ? n + 1 : n), 0);
        if (groups > MAX_GROUPS_PER_PAGE)
          throw new PermanentFailure(
            'TOO_COMPLEX',
            `The PDF is too complex to process: page ${n} draws more than ${MAX_GROUPS_PER_PAGE} transparency groups`,
          );
        const base = page.getViewport({ scale: 1 });
        const size = { widthPt: base.width, heightPt: base.height };
        const drawn = await drawAt(page, base, options.dpi);
        const { width, height } = drawn;
        if (options.format === 'png') return { page: n, width, height, pgm: await drawn.encode('png'), ...size };
        const pixels = drawn.getContext('2d').getImageData(0, 0, width, height).data;
        const kept =
          options.keep && largestImage >= options.keep.minImagePixels
            ? await keptPng(page, base, drawn, options.keep.dpi)
            : undefined;
        return { page: n, width, height, pgm: rgbaToPgm(pixels, width, height), ...size, ...(kept && { png: kept }) };
      } finally {
        page.cleanup();
      }
    },
    close: () => task.destroy().catch(() => undefined), // pdf.js 6: released through its loading task
  };
}

/**
 * Renders the given pages (1-based) of a PDF in this process, one at a time, and hands each image
 * to `onPage` before drawing the next; pages that draw nothing are skipped. For trusted documents
 * (test fixtures, benchmarks) and the drawing child: the service draws through
 * ocr/bounded-render.ts.
 */
export async function renderPages(
  data: Uint8Array,
  pages: number[],
  options: RenderOptions,
  onPage: (page: RenderedPage) => void | Promise<void>,
): Promise<void> {
  const doc = await openForDrawing(data, options);
  try {
    for (const n of pages) {
      const image = await doc.draw(n);
      if (image) await onPage(image);
    }
  } finally {
    await doc.close();
  }
}
