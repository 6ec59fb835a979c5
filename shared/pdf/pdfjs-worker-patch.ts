import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Plugin } from 'esbuild';
import { replaceOnce as replaceOnceIn } from '../source-patch.ts';

// Right-to-left ligatures in pdf.js's text (docs/DECISIONS.md, "Right-to-left ligatures").
//
// pdf.js builds a text item by joining its glyphs' Unicode strings in drawing (visual) order and
// then reverses right-to-left runs character by character. A glyph that stands for several
// letters (a ligature: lam-alef, lam-khah, Hebrew alef-lamed), mapped by the font's ToUnicode to
// those letters in logical order, is reversed with the rest: "لا" comes out "ال", الخطوط as
// اخلطوط. PDFBox and pypdf fix it the same way: a multi-letter right-to-left glyph string is put
// in visual order before the join, so the run's reversal brings it back to logical order.
// pdf.js exposes no hook for it, so the one line that pushes a glyph's string is rewritten when the
// extraction child is bundled. (A ligature mapped to one presentation-form code point is the other
// case: pdf.js's own NFKC would expand it before the reversal; extraction turns that off and
// normalises after, see normalise.ts.)

const PUSH_GLYPH = 'textChunk.str.push(glyphUnicode);';
const HELPER = 'visualOrderOfGlyph';

// Strong right-to-left letters (Hebrew, Arabic, Syriac, Thaana, NKo and their presentation forms).
const RTL_FIRST = '/^[\\u0590-\\u08ff\\ufb1d-\\ufdff\\ufe70-\\ufefc]/u';

const helperSource = `
function ${HELPER}(unicode, vertical) {
  if (vertical || unicode.length < 2 || !${RTL_FIRST}.test(unicode)) return unicode;
  return Array.from(unicode).reverse().join('');
}
`;

/** Replaces the one occurrence of `find`; fails the build, not the text, when a pdf.js upgrade moves it. */
const replaceOnce = (source: string, find: string, replacement: string, why: string) =>
  replaceOnceIn(source, find, replacement, 'pdf.js worker', why);

// Image data left unread while text is read (docs/DECISIONS.md, Large PDFs: nothing holds the whole
// file). To read a page's text pdf.js loads every resource the page names, and parsing a stream
// object loads its whole data: a page's images come into memory only for pdf.js to see that they
// are images and skip them. With `globalThis.pdfjsTextOnly` set (the extraction child sets it for
// text, clears it for drawing), an image stream's data is not loaded when its object is parsed, nor
// by the resource loader: its dictionary, the bytes around its `endstream` and the first bytes its
// filter reads are all that text extraction reads of it.
const TEXT_ONLY_IMAGE = 'globalThis.pdfjsTextOnly && dict?.get("Subtype")?.name === "Image"';
// The anchors' lines joined at run time: the minifier writes a string holding line breaks as a
// template literal, whose indented lines would show in every bundle that imports this module.
const SUB_STREAM = [
  '  makeSubStream(start, length, dict = null) {',
  '    if (length) {',
  '      if (start + length > this.progressiveDataLength) {',
].join('\n');
const LOADER_STREAM = [
  '      if (currentNode instanceof BaseStream) {',
  '        const baseStreams = currentNode.getBaseStreams();',
].join('\n');

/** pdf.js's worker source with multi-letter right-to-left glyphs pushed in visual order. */
export function patchPdfjsWorker(source: string): string {
  const patched = replaceOnce(
    source,
    PUSH_GLYPH,
    `textChunk.str.push(${HELPER}(glyphUnicode, textChunk.vertical));`,
    'right-to-left ligatures',
  );
  return `${patched}${helperSource}`;
}

/** pdf.js's worker source leaving image data unread while text is read (see TEXT_ONLY_IMAGE). */
export function leaveImageDataUnread(source: string): string {
  const patched = replaceOnce(
    source,
    SUB_STREAM,
    SUB_STREAM.replace(
      'if (start + length > this.progressiveDataLength) {',
      `if (start + length > this.progressiveDataLength && !(${TEXT_ONLY_IMAGE})) {`,
    ),
    'image data left unread',
  );
  return replaceOnce(
    patched,
    LOADER_STREAM,
    [
      `      if (currentNode instanceof BaseStream && (${TEXT_ONLY_IMAGE.replaceAll('dict?.', 'currentNode.dict?.')})) continue;`,
      LOADER_STREAM,
    ].join('\n'),
    'image data left unread',
  );
}

// Images refused per page (docs/DECISIONS.md, Bounds where the cost is). pdf.js drops an image
// above `maxImageSize` (pixels alone) with a warning and draws the page without it, so OCR would
// read a blank cover and the page route show one. The drawing child installs
// `globalThis.pdfjsRefuseImage(width, height, filter, bitsPerComponent)`, which weighs the image's
// cost against the child's memory and records a refusal; the page that asked for it is then
// reported unreadable. Checked where pdf.js checks its own limit: before anything is decoded.
const IMAGE_SIZE_CHECK = 'if (maxImageSize !== -1 && w * h > maxImageSize) {';

/** pdf.js's worker source asking `globalThis.pdfjsRefuseImage` before decoding an image (see IMAGE_SIZE_CHECK). */
export function refuseCostlyImages(source: string): string {
  return replaceOnce(
    source,
    IMAGE_SIZE_CHECK,
    'if (globalThis.pdfjsRefuseImage?.(w, h, dict.get("F", "Filter"), dict.get("BPC", "BitsPerComponent")) || (maxImageSize !== -1 && w * h > maxImageSize)) {',
    'images refused per page',
  );
}

// Pages that draw nothing, told while their text is read (docs/DECISIONS.md, Bounds where the cost
// is): a page without text goes to OCR, and drawing one only to find it blank costs a child's
// page (0.1 CPU-s). The loop of getTextContent sees every operator of the page and of its forms;
// it sets `globalThis.pdfjsPageDraws` when one is in `globalThis.pdfjsDrawingOps` (painting a
// path, a shading, an XObject or inline image, showing text). `pdfjsCountsDrawing` says the
// worker is patched: an unpatched one never sets the flag, and no page is taken for blank.
const TEXT_LOOP_OPERATOR = ['        currentTextState ||= textState.clone();', '        const fn = operation.fn;'].join(
  '\n',
);

/** pdf.js's worker source telling, while text is read, whether a page draws anything (see TEXT_LOOP_OPERATOR). */
export function noteDrawingOperators(source: string): string {
  const patched = replaceOnce(
    source,
    TEXT_LOOP_OPERATOR,
    `${TEXT_LOOP_OPERATOR}\n        if (globalThis.pdfjsDrawingOps?.has(fn)) globalThis.pdfjsPageDraws = true;`,
    'pages that draw nothing',
  );
  return `${patched}\nglobalThis.pdfjsCountsDrawing = true;\n`;
}

/** esbuild plugin: bundles pdf.js's worker patched (every patch above; never left external). */
export const pdfjsWorkerPatch: Plugin = {
  name: 'pdfjs-worker-patches',
  setup(build) {
    // Resolved here, so that a build marking packages external still bundles (and patches) it.
    build.onResolve({ filter: /^pdfjs-dist\/(legacy\/)?build\/pdf\.worker\.mjs$/ }, (args) => ({
      path: createRequire(join(args.resolveDir, 'importer.js')).resolve(args.path),
    }));
    build.onLoad({ filter: /[\\/]pdfjs-dist[\\/](legacy[\\/])?build[\\/]pdf\.worker\.mjs$/ }, async (args) => ({
      contents: noteDrawingOperators(
        refuseCostlyImages(leaveImageDataUnread(patchPdfjsWorker(await readFile(args.path, 'utf8')))),
      ),
      loader: 'js',
    }));
  },
};
