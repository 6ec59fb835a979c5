import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Plugin } from 'esbuild';

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

/** pdf.js's worker source with multi-letter right-to-left glyphs pushed in visual order. */
export function patchPdfjsWorker(source: string): string {
  const at = source.indexOf(PUSH_GLYPH);
  // Fails the build, not the text, when a pdf.js upgrade moves the line.
  if (at < 0 || source.indexOf(PUSH_GLYPH, at + 1) >= 0)
    throw new Error(`pdf.js worker: expected exactly one "${PUSH_GLYPH}" to patch (right-to-left ligatures)`);
  return `${source.replace(PUSH_GLYPH, `textChunk.str.push(${HELPER}(glyphUnicode, textChunk.vertical));`)}${helperSource}`;
}

/** esbuild plugin: bundles pdf.js's worker patched (and never leaves it external). */
export const pdfjsWorkerPatch: Plugin = {
  name: 'pdfjs-worker-rtl-ligatures',
  setup(build) {
    // Resolved here, so that a build marking packages external still bundles (and patches) it.
    build.onResolve({ filter: /^pdfjs-dist\/(legacy\/)?build\/pdf\.worker\.mjs$/ }, (args) => ({
      path: createRequire(join(args.resolveDir, 'importer.js')).resolve(args.path),
    }));
    build.onLoad({ filter: /[\\/]pdfjs-dist[\\/](legacy[\\/])?build[\\/]pdf\.worker\.mjs$/ }, async (args) => ({
      contents: patchPdfjsWorker(await readFile(args.path, 'utf8')),
      loader: 'js',
    }));
  },
};
