// What drawing an image costs, and the most one page's image may cost in a drawing child of a given
// resident size (docs/DECISIONS.md, Bounds where the cost is). pdf.js decodes an image whole,
// whatever size it is drawn at, then copies it to a canvas of its own size and scales it down, so
// a page's memory follows its largest image's pixels. Measured in the drawing child (pdf.js 6,
// @napi-rs/canvas, 30 M pixel images, peak resident size less the child's own): baseline JPEG
// (DCTDecode) 14–16 bytes a pixel; 8-bit Flate grey 17, RGB 21, RGB with a soft mask 25; 16-bit
// RGB 32. An image whose cost is above the budget is never decoded: its page is unreadable.

const MiB = 1024 * 1024;

/** The drawing child's resident size before any image: Node, pdf.js, the canvas library, a page. */
export const DRAWING_CHILD_BASE_MB = 160;
/** Bytes a pixel of a JPEG image costs to draw (measured 14–16, with headroom). */
const JPEG_BYTES_PER_PIXEL = 17;
/** Bytes a pixel of any other 8-bit image costs to draw (measured up to 25, with headroom). */
const BYTES_PER_PIXEL = 27;

/** An image's dictionary entries that decide its cost (as pdf.js reads them). */
export interface ImageTraits {
  width: number;
  height: number;
  /** Filter names, outermost first. */
  filters: string[];
  bitsPerComponent?: number;
}

/** Estimated bytes drawing the image takes at its peak. */
export function imageDrawingBytes(image: ImageTraits): number {
  const perPixel =
    image.filters.at(-1) === 'DCTDecode' || image.filters.at(-1) === 'DCT' ? JPEG_BYTES_PER_PIXEL : BYTES_PER_PIXEL;
  const depth = Math.max(1, (image.bitsPerComponent ?? 8) / 8);
  return image.width * image.height * perPixel * depth;
}

/** The most one image may cost in a drawing child allowed `rssMb`, capped by `maxPixels` when set. */
export interface ImageBudget {
  bytes: number;
  maxPixels?: number;
}

export function imageBudgetFor(rssMb: number, maxPixels?: number): ImageBudget {
  return { bytes: Math.max(0, rssMb - DRAWING_CHILD_BASE_MB) * MiB, ...(maxPixels !== undefined && { maxPixels }) };
}

/** Why an image is refused, or undefined when its page can draw it. */
export function refusal(image: ImageTraits, budget: ImageBudget): string | undefined {
  const pixels = image.width * image.height;
  const size = `an image of ${image.width}×${image.height} pixels`;
  if (budget.maxPixels !== undefined && pixels > budget.maxPixels)
    return `${size} is larger than the ${budget.maxPixels} pixels allowed (OCR_MAX_IMAGE_PIXELS)`;
  const bytes = imageDrawingBytes(image);
  if (bytes > budget.bytes)
    return `${size} needs about ${Math.ceil(bytes / MiB)} MB to draw, more than the ${Math.floor(budget.bytes / MiB)} MB this function can give it`;
  return undefined;
}
