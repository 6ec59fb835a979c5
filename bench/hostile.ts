import { performance } from 'node:perf_hooks';
import { loadConfig } from '#shared/config/all.ts';
import { extractTextBounded } from '#shared/pdf/bounded-extract.ts';
import { extractLimits } from '#shared/ingestion/extract-stage.ts';
import { PermanentFailure } from '#shared/files/failures.ts';
import { renderPagesBounded } from '#shared/pdf/ocr/bounded-render.ts';
import { ocrRenderLimits } from '#shared/ingestion/ocr-stage.ts';
import { DRAWING_CHILD_BASE_MB } from '#shared/pdf/ocr/image-budget.ts';
import { pipelineStages } from '../infra/routes.ts';
import {
  hostileClasses,
  hostilePdf,
  ocrHostileClasses,
  ocrHostilePdf,
  plainRawPdf,
} from '../test/helpers/hostile-pdfs.ts';
import { bookPdf } from '../test/helpers/book-pdf.ts';
import type { BenchContext, Benchmark } from './lib/context.ts';
import { absoluteCheck, type Check } from './lib/report.ts';

// Hostile documents: each class of test/helpers/hostile-pdfs.ts through the bounded
// extraction of pdf-extract, with its default limits for the function's memory (manifest
// memoryMb). Per class: the outcome, the time and the extraction child's peak RSS, against the
// budgets: time ≤ the per-page budget (PDF_EXTRACT_PAGE_MS: every class here is one to twenty
// pages and must end long before the document budget), peak RSS ≤ the child's RSS limit. A plain
// page is the baseline (what any document costs: a process, pdf.js loaded). Then the documents
// that are ruinous to draw, through OCR's bounded drawing (pdf-ocr's limits for its memory), with
// the plain page drawn as their baseline: outcome, time and the drawing child's peak RSS against
// the per-page time budget (OCR_PAGE_MS, plus 2 s for the child to start and open the document)
// and the child's RSS limit. A real book (352 pages of text after a cover that is one 93 M pixel
// JPEG) is read and its cover drawn under the same limits: it must complete, and be drawn.

/** The real book's shape: the one a document-wide image budget refused. */
const book = () => bookPdf({ textPages: 351 }).then((pdf) => Buffer.from(pdf));

const memoryMb = pipelineStages['pdf-extract'].memoryMb;

type Case = [name: string, make: () => Promise<Buffer>];

/**
 * Each case's document through `work` in a bounded child, the first case the baseline: a row per
 * case (outcome, time, the child's peak RSS) and its checks against the time and RSS limits. A
 * refusal is an outcome, named by its reason; anything else thrown fails the benchmark.
 */
async function measureCases(
  ctx: BenchContext,
  cases: Case[],
  limits: { maxMs: number; rssMb: number; rssMetric: string },
  work: (pdf: Buffer, onStats: (s: { childPeakRssMb?: number }) => void) => Promise<string>,
) {
  const rows: (string | number)[][] = [];
  const checks: Check[] = [];
  let baseline: number | undefined;
  for (const [name, make] of cases) {
    const pdf = await make();
    ctx.log(`hostile: ${name} (${pdf.length} bytes)`);
    let peak: number | undefined;
    const t0 = performance.now();
    let outcome: string;
    try {
      outcome = await work(pdf, (s) => (peak = s.childPeakRssMb));
    } catch (err) {
      if (!(err instanceof PermanentFailure)) throw err;
      outcome = `${err.reason}: ${err.message.replace('The PDF is too complex to process: ', '')}`;
    }
    const ms = performance.now() - t0;
    baseline ??= ms;
    rows.push([name, pdf.length, outcome, Math.round(ms), peak ?? '–']);
    checks.push(
      absoluteCheck(
        `${name}: time`,
        Math.round(ms),
        'ms',
        { max: limits.maxMs },
        { baseline: Math.round(baseline), ratio: ms / baseline },
      ),
    );
    if (peak !== undefined)
      checks.push(absoluteCheck(`${name}: ${limits.rssMetric}`, peak, 'MB', { max: limits.rssMb }));
  }
  return { rows, checks };
}

export const hostile: Benchmark = {
  name: 'hostile',
  title: 'Hostile PDFs: outcome, time and peak RSS per class against the extraction budgets',
  async run(ctx) {
    const config = loadConfig({ ...process.env, TABLE_NAME: process.env.TABLE_NAME ?? 'bench' });
    const limits = extractLimits(config, { memoryMb });
    const extraction = await measureCases(
      ctx,
      [
        ['plain page (baseline)', async () => plainRawPdf()],
        ...hostileClasses.map((k): Case => [k, () => hostilePdf(k)]),
        ['real book: 352 pages, a 93 M pixel JPEG cover', book],
      ],
      { maxMs: limits.pageMs, rssMb: limits.rssMb, rssMetric: 'child peak RSS' },
      async (pdf, onStats) => {
        const r = await extractTextBounded(pdf, {
          maxPages: config.PDF_MAX_PAGES,
          limits,
          onPage: () => undefined,
          onStats,
        });
        return `completed (${r.pages} pages, ${r.textPages} with text)`;
      },
    );
    // OCR: drawing in the bounded child.
    const ocrMemoryMb = pipelineStages['pdf-ocr'].memoryMb;
    const ocrLimits = ocrRenderLimits(config, { memoryMb: ocrMemoryMb });
    const drawing = await measureCases(
      ctx,
      [
        ['plain page drawn (baseline)', async () => plainRawPdf()],
        ...ocrHostileClasses.map((k): Case => [`OCR ${k}`, () => ocrHostilePdf(k)]),
        ["real book's cover (8992×10384 JPEG)", book],
      ],
      // Plus 2 s for the child to start and open the document.
      { maxMs: ocrLimits.pageMs + 2_000, rssMb: ocrLimits.rssMb, rssMetric: 'drawing child peak RSS' },
      async (pdf, onStats) => {
        let outcome = 'drawn';
        await renderPagesBounded(new Uint8Array(pdf), [1], {
          dpi: config.OCR_DPI,
          limits: ocrLimits,
          onPage: (p) => {
            outcome = p.image ? `drawn (${p.image.width}×${p.image.height})` : `skipped (${p.skipped})`;
          },
          onStats,
        });
        return outcome;
      },
    );
    return {
      checks: [...extraction.checks, ...drawing.checks],
      details: [
        {
          title: `Per class (pdf-extract ${memoryMb} MB: child heap ${limits.heapMb} MB, RSS limit ${limits.rssMb} MB, ${limits.pageMs} ms a page)`,
          header: ['class', 'bytes', 'outcome', 'ms', 'child peak RSS MB'],
          rows: extraction.rows,
        },
        {
          title: `OCR drawing (pdf-ocr ${ocrMemoryMb} MB: child heap ${ocrLimits.heapMb} MB, RSS limit ${ocrLimits.rssMb} MB, ${ocrLimits.pageMs} ms a page, an image's cost ≤ ${ocrLimits.rssMb - DRAWING_CHILD_BASE_MB} MB)`,
          header: ['document', 'bytes', 'outcome', 'ms', 'child peak RSS MB'],
          rows: drawing.rows,
        },
      ],
      notes: [
        'Peak RSS is sampled every 50 ms from /proc (Linux); a child stopped within its first sample reports none.',
      ],
      data: { limits, ocrLimits },
    };
  },
};
