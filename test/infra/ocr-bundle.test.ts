import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildFunctions, CMAPS_DIR, projectRoot, WASM_DIR } from '#infra/build.ts';
import { probeFunction } from '#test/helpers/bundle-probe.ts';
import { makeCcittScanPdf, makeScannedPdf } from '#test/helpers/make-script-pdfs.ts';

// OCR from a built asset, offline: the pdf-ocr packaging (tesseract.js, its WASM core, the
// trained data, @napi-rs/canvas) bundled into a temporary directory with no node_modules above
// it, run by a plain Node process in which every network call throws. The host's canvas addon is
// shipped here (x64); `npm run build` ships linux-arm64-gnu for Lambda instead.

const run = promisify(execFile);
let outDir: string;
beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'ocr-bundle-'));
});
afterAll(() => rm(outDir, { recursive: true, force: true }));

/** Page 1 read by OCR as `text`, with the word boxes it was drawn from (in the bundle too). */
const recognisedPage = (text: string) => ({
  page: 1,
  text,
  verdict: { usable: true },
  confidence: expect.any(Number),
  recognised: true,
  layout: {
    width: expect.any(Number),
    height: expect.any(Number),
    spans: expect.arrayContaining([expect.any(Number)]),
  },
});

test('the OCR asset reads a scanned page with no network and nothing from the project', async () => {
  const probe = probeFunction('ocr-probe', 'queue', { timeoutSeconds: 60, memoryMb: 2048 });
  const host = `@napi-rs/canvas-${process.platform}-${process.arch}-gnu`;
  const [b] = await buildFunctions({ outDir, functions: [probe], canvasBinaries: [host] });
  expect(b!.nodeModules).toEqual(
    expect.arrayContaining(['tesseract.js', 'tesseract.js-core', '@tesseract.js-data/eng', '@napi-rs/canvas', host]),
  );
  const shipped = (path: string) => existsSync(join(b!.dir, path));
  expect(shipped('node_modules/tesseract.js-core/tesseract-core-simd.wasm')).toBe(true);
  expect(shipped('node_modules/tesseract.js-core/tesseract-core-simd-lstm.wasm')).toBe(false); // never loaded by the Node worker
  expect(shipped('node_modules/@tesseract.js-data/eng/4.0.0_best_int/eng.traineddata.gz')).toBe(true);
  expect(shipped('node_modules/@tesseract.js-data/eng/4.0.0/eng.traineddata.gz')).toBe(false);
  expect(shipped(`${CMAPS_DIR}/UniJIS-UCS2-H.bcmap`)).toBe(true);
  expect(shipped(`${WASM_DIR}/jbig2.wasm`)).toBe(true); // JBIG2 and CCITT fax
  expect(shipped(`${WASM_DIR}/openjpeg.wasm`)).toBe(true); // JPX
  expect(shipped(`${WASM_DIR}/openjpeg_nowasm_fallback.js`)).toBe(false);
  expect(shipped('extract-child.mjs')).toBe(true); // pages are drawn in the bounded child

  // A scan in colour, then a black-and-white (CCITT fax) one: the second needs the decoders of wasm/.
  const pdfPath = join(outDir, 'scan.pdf');
  const ccittPath = join(outDir, 'ccitt-scan.pdf');
  await writeFile(pdfPath, await makeScannedPdf(['The lighthouse keeper is named Margaret Hollis.']));
  await writeFile(ccittPath, await makeCcittScanPdf(['The market opens on Tuesdays and Saturdays.']));
  const script = `const { handler } = await import(${JSON.stringify(join(b!.dir, 'index.mjs'))});
    const colour = await handler({ pdfPath: ${JSON.stringify(pdfPath)}, pages: [1] });
    const ccitt = await handler({ pdfPath: ${JSON.stringify(ccittPath)}, pages: [1] });
    console.log(JSON.stringify({ ...colour, ccitt: ccitt.pages }));`;
  const scriptPath = join(outDir, 'run-probe.mjs');
  await writeFile(scriptPath, script);
  // Worker threads inherit the --import: tesseract's workers run with the network blocked too.
  const blocker = join(projectRoot, 'test/infra/fixtures/block-network.mjs');
  const { stdout } = await run(process.execPath, ['--import', blocker, scriptPath], {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH },
    timeout: 120_000,
  });
  const result = JSON.parse(stdout);
  expect(result.pages).toEqual([recognisedPage('The lighthouse keeper is named Margaret Hollis.')]);
  expect(result.ccitt).toEqual([recognisedPage('The market opens on Tuesdays and Saturdays.')]);
  expect(result.cmapsDir).toBe(`${join(b!.dir, CMAPS_DIR)}/`);
  expect(result.wasmDir).toBe(`${join(b!.dir, WASM_DIR)}/`);
}, 240_000);
