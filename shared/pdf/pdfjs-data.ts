import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// pdf.js's data directories: `cmaps/` (the predefined CJK CMaps, packed .bcmap) and `wasm/`
// (the image decoders) are looked up like standard_fonts/: PDFJS_CMAPS_DIR, else `cmaps/` beside the bundle, else the
// package in node_modules (tests, npm start). Without them, text in fonts that use a predefined
// CMap (UniJIS-UCS2-H, UniGB-UCS2-H, …: common in Japanese and Chinese PDFs) is lost.

const found = new Map<string, string>();

/** A pdfjs-dist data directory (with a trailing slash): the first candidate holding `probe`. */
function pdfjsDataDir(name: 'cmaps' | 'standard_fonts' | 'wasm', probe: string, override?: string): string {
  const cached = found.get(name);
  if (cached) return cached;
  const candidates = [override];
  try {
    candidates.push(join(dirname(fileURLToPath(import.meta.url)), name)); // beside the bundle
  } catch {
    // import.meta.url is not a file URL: skip
  }
  try {
    candidates.push(join(dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), name));
  } catch {
    // not installed beside us (a bundle): the directory beside the bundle is the one
  }
  const dir = `${candidates.find((d) => d && existsSync(join(d, probe))) ?? candidates.find(Boolean) ?? name}/`.replace(
    /\/+$/,
    '/',
  );
  found.set(name, dir);
  return dir;
}

/** The directory of pdf.js's packed CMaps. */
export const cmapsDir = () => pdfjsDataDir('cmaps', 'UniJIS-UCS2-H.bcmap', process.env.PDFJS_CMAPS_DIR);

/**
 * The directory of pdf.js's WebAssembly image decoders (jbig2.wasm: JBIG2 and CCITT fax;
 * openjpeg.wasm: JPX; qcms: ICC colours). Without it pdf.js 5+ skips those images silently.
 */
export const wasmDir = () => pdfjsDataDir('wasm', 'jbig2.wasm');
