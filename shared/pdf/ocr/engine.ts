import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { OcrWord } from '../positions.ts';

// Text recognition with tesseract.js, offline: the WASM core (tesseract.js-core), the worker
// script and the trained data (@tesseract.js-data/<lang>, the LSTM "best_int" models) are all
// read from installed packages — node_modules in development, the node_modules shipped beside
// the bundle when deployed (infra/build.ts) — and nothing is fetched or cached at run time
// (`cacheMethod: 'none'`; tesseract.js would otherwise download from a CDN and write a cache).
// A scheduler spreads pages over `workers` tesseract workers, each a worker thread of its own.

type Tesseract = typeof import('tesseract.js');

interface OcrEngineOptions {
  /** Tesseract language codes, each installed as @tesseract.js-data/<code> (eng by default). */
  languages: string[];
  /** Worker threads (pages recognised at once). */
  workers: number;
}

interface Recognised {
  text: string;
  /** Tesseract's mean word confidence, 0–100. */
  confidence: number;
  /** The words in reading order, with their boxes in pixels of the image. */
  words: OcrWord[];
}

const MODEL_DIR = '4.0.0_best_int';

class OcrUnavailableError extends Error {
  override name = 'OcrUnavailableError';
}

/** The directory holding `<lang>.traineddata.gz` for every language (a symlink farm in /tmp when they come from several packages). */
function languageDir(languages: string[], require = createRequire(import.meta.url)): string {
  const dirs = languages.map((lang) => {
    let pkg: string;
    try {
      pkg = dirname(require.resolve(`@tesseract.js-data/${lang}/package.json`));
    } catch {
      throw new OcrUnavailableError(`OCR language "${lang}" is not installed (npm install @tesseract.js-data/${lang})`);
    }
    const dir = join(pkg, MODEL_DIR);
    if (!existsSync(join(dir, `${lang}.traineddata.gz`)))
      throw new OcrUnavailableError(`No ${MODEL_DIR} model in @tesseract.js-data/${lang}`);
    return dir;
  });
  if (new Set(dirs).size === 1) return dirs[0]!;
  const farm = join(tmpdir(), `ocr-lang-${languages.join('-')}`);
  mkdirSync(farm, { recursive: true });
  languages.forEach((lang, i) => {
    const link = join(farm, `${lang}.traineddata.gz`);
    if (!existsSync(link)) symlinkSync(join(dirs[i]!, `${lang}.traineddata.gz`), link);
  });
  return farm;
}

/** Paths tesseract.js needs, all inside installed packages. */
export function tesseractPaths(languages: string[]) {
  const require = createRequire(import.meta.url);
  const core = dirname(require.resolve('tesseract.js-core/package.json'));
  const tesseract = dirname(require.resolve('tesseract.js/package.json'));
  return {
    langPath: languageDir(languages, require),
    corePath: core,
    workerPath: join(tesseract, 'src/worker-script/node/index.js'),
  };
}

export class OcrEngine {
  private constructor(
    private readonly scheduler: import('tesseract.js').Scheduler,
    readonly workers: number,
  ) {}

  static async create(options: OcrEngineOptions): Promise<OcrEngine> {
    const tesseract: Tesseract = await import('tesseract.js');
    const { createScheduler, createWorker, OEM } =
      (tesseract as unknown as { default?: Tesseract }).default ?? tesseract;
    const paths = tesseractPaths(options.languages);
    const scheduler = createScheduler();
    const n = Math.max(1, options.workers);
    try {
      const workers = await Promise.all(
        Array.from({ length: n }, () =>
          createWorker(options.languages.join('+'), OEM.LSTM_ONLY, { ...paths, cacheMethod: 'none', gzip: true }),
        ),
      );
      for (const w of workers) scheduler.addWorker(w);
    } catch (err) {
      await scheduler.terminate().catch(() => undefined);
      throw err;
    }
    return new OcrEngine(scheduler, n);
  }

  /** Recognises one image (PGM, PNG or JPEG bytes). */
  async recognise(image: Uint8Array): Promise<Recognised> {
    const result = await this.scheduler.addJob(
      'recognize',
      Buffer.from(image.buffer, image.byteOffset, image.byteLength),
      {},
      { text: true, blocks: true },
    );
    const words: OcrWord[] = [];
    for (const block of result.data.blocks ?? [])
      for (const paragraph of block.paragraphs)
        for (const line of paragraph.lines) for (const { text, bbox } of line.words) words.push({ text, bbox });
    return { text: result.data.text ?? '', confidence: result.data.confidence ?? 0, words };
  }

  async close(): Promise<void> {
    await this.scheduler.terminate();
  }
}

/**
 * One engine per process, created on first use and kept while warm (starting a worker reads
 * its trained data: seconds). Closed after `idleMs` without use, so an idle local runtime or a
 * test process is not held open by tesseract's worker threads (the timer is unref'd).
 */
export class SharedOcrEngine {
  private engine: Promise<OcrEngine> | undefined;
  private users = 0;
  private idle: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: () => OcrEngineOptions,
    private readonly idleMs = 10_000,
  ) {}

  /** Runs `work` with the engine. */
  async use<T>(work: (engine: OcrEngine) => Promise<T>): Promise<T> {
    clearTimeout(this.idle);
    this.users++;
    try {
      this.engine ??= OcrEngine.create(this.options()).catch((err: unknown) => {
        this.engine = undefined;
        throw err;
      });
      return await work(await this.engine);
    } finally {
      if (--this.users === 0) {
        this.idle = setTimeout(() => void this.close(), this.idleMs);
        this.idle.unref();
      }
    }
  }

  async close(): Promise<void> {
    clearTimeout(this.idle);
    const engine = this.engine;
    this.engine = undefined;
    if (engine) await (await engine.catch(() => undefined))?.close().catch(() => undefined);
  }
}
