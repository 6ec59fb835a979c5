import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DomUtils, parseDocument } from 'htmlparser2';
import MarkdownIt from 'markdown-it';
import { SaxesParser } from 'saxes';
import { unzipSync } from 'fflate';
import { makeTextPdf } from '../test/helpers/make-pdf.ts';
import { makeDocx, makePptx, makeXlsx } from '../test/helpers/ooxml-docs.ts';
import type { Benchmark } from './lib/context.ts';
import { info, median, ratioCheck, type Check } from './lib/report.ts';
import { plainExtraction } from './ingestion.ts';

// Formats: each reader on a document of about 100 pages' worth (100 sections, slides or chapters;
// a 5,000-row sheet), against the plain library reading the same bytes for their text in the same
// run (plainRead: the package inflated and its XML parsed with fflate + saxes for OOXML,
// htmlparser2's document for HTML, markdown-it's tokens for Markdown, a decode for text, pdf.js's
// text content of every page for PDF). Parts per second (the reader's parts, over each side's time), median of runs
// interleaved after warm-ups; target ≥ 0.7 × the plain library. The reader's peak memory is the
// bounded child's, reading the same bytes as the pipeline does.

const RUNS = 15;
/**
 * Runs before the measured ones, so both sides are compiled by the JIT (a Lambda reads many
 * documents). Five were too few for the readers: the plain side's code is one path for the three
 * OOXML formats, warmed by each format before, while a reader's own code had had six reads, and
 * the median of 15 fell among runs still in the engine's lower tiers (a Word read's median 2.5 ×
 * its fastest).
 */
const WARM_UPS = 30;
const RATIO_MIN = 0.7;

const sentence = (n: number, k: number) =>
  `Section ${n} observes that the harbour measurements of series ${k} were taken at dawn and checked twice.`;
const paragraphs = (n: number) => Array.from({ length: 6 }, (_, k) => sentence(n, k));
const tableRows = (n: number) => [
  ['Station', 'Reading', 'Note'],
  ...Array.from({ length: 8 }, (_, r) => [`S${n}-${r}`, String(100 + r), `calm ${r}`]),
];

function documents(): Record<string, Uint8Array> {
  const chapters = Array.from({ length: 100 }, (_, k) => k + 1);
  const html = `<!doctype html><html><head><title>Report</title></head><body><nav><a href="/">Home</a></nav><main>${chapters
    .map(
      (n) =>
        `<h2>Chapter ${n}</h2>${paragraphs(n)
          .map((p) => `<p>${p}</p>`)
          .join('')}<table>${tableRows(n)
          .map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`)
          .join('')}</table>`,
    )
    .join('')}</main></body></html>`;
  const markdown = chapters
    .map((n) => {
      const [head, ...rows] = tableRows(n);
      return `## Chapter ${n}\n\n${paragraphs(n).join('\n\n')}\n\n| ${head!.join(' | ')} |\n| --- | --- | --- |\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`;
    })
    .join('\n');
  const text = chapters.map((n) => paragraphs(n).join(' ')).join('\n\n');
  return {
    docx: makeDocx(
      chapters.flatMap((n) => [
        { heading: `Chapter ${n}`, level: 1 },
        ...paragraphs(n).map((paragraph) => ({ paragraph })),
        { table: tableRows(n) },
      ]),
    ),
    pptx: makePptx(
      chapters.map((n) => ({ title: `Slide ${n}`, body: paragraphs(n).slice(0, 4), notes: paragraphs(n).slice(4) })),
    ),
    xlsx: makeXlsx([
      {
        name: 'Readings',
        rows: [
          ['Station', 'Reading', 'Wind', 'Note', 'Checked'],
          ...Array.from({ length: 5000 }, (_, r) => [`S${r}`, 100 + r, r % 9, `calm ${r}`, r % 2 === 0]),
        ],
      },
    ]),
    html: new TextEncoder().encode(html),
    markdown: new TextEncoder().encode(markdown),
    text: new TextEncoder().encode(text),
  };
}

/**
 * The plain library reading the same bytes for their text, as its documentation shows it: every
 * part of a package inflated and every XML and relationship part parsed, its text collected;
 * htmlparser2's document and its text content; markdown-it's tokens; the text decoded and cut
 * into paragraphs. No structure beyond that, no bounds.
 */
function plainRead(format: string, bytes: Uint8Array): number {
  switch (format) {
    case 'docx':
    case 'pptx':
    case 'xlsx': {
      const texts: string[] = [];
      for (const [name, data] of Object.entries(unzipSync(bytes)))
        if (name.endsWith('.xml') || name.endsWith('.rels')) {
          const parser = new SaxesParser();
          parser.on('text', (t) => texts.push(t));
          parser.write(new TextDecoder().decode(data)).close();
        }
      return texts.join(' ').length;
    }
    case 'html':
      return DomUtils.textContent(parseDocument(new TextDecoder().decode(bytes))).length;
    case 'markdown':
      return new MarkdownIt().parse(new TextDecoder().decode(bytes), {}).length;
    default:
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes).split(/\n\s*\n/).length;
  }
}

async function timed<T>(work: () => T | Promise<T>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

export const formats: Benchmark = {
  name: 'formats',
  title: 'Readers per format: parts/s and peak memory against the plain library',
  async run(ctx) {
    const { readDocument } = await import('#shared/readers/documents.ts');
    const { DEFAULT_READER_LIMITS } = await import('#shared/readers/reader.ts');
    const { readDocumentBounded } = await import('#shared/pdf/bounded-read.ts');
    const { extractText } = await import('#shared/pdf/extract.ts');
    const checks: Check[] = [];
    const rows: (string | number)[][] = [];
    for (const [format, bytes] of Object.entries(documents())) {
      ctx.log(`formats: ${format}`);
      const { parts } = await readDocument(bytes, DEFAULT_READER_LIMITS); // the part count
      for (let k = 0; k < WARM_UPS; k++) {
        await readDocument(bytes, DEFAULT_READER_LIMITS);
        plainRead(format, bytes);
      }
      const ours: number[] = [];
      const plain: number[] = [];
      for (let k = 0; k < RUNS; k++) {
        ours.push(await timed(() => readDocument(bytes, DEFAULT_READER_LIMITS)));
        plain.push(await timed(() => plainRead(format, bytes)));
      }
      const path = join(ctx.tmpDir, `formats.${format}`);
      await writeFile(path, bytes);
      let peakMb = 0;
      await readDocumentBounded(
        path,
        { child: { heapMb: 1024, rssMb: 2048, pageMs: 60_000, documentMs: 120_000 }, reader: DEFAULT_READER_LIMITS },
        (stats) => (peakMb = stats.childPeakRssMb ?? 0),
      );
      const perSecond = (ms: number) => (parts.length / ms) * 1000;
      checks.push(
        ratioCheck(`${format}: parts/s`, perSecond(median(ours)), perSecond(median(plain)), 'parts/s', {
          min: RATIO_MIN,
        }),
      );
      checks.push(info(`${format}: peak resident size of the reading child`, peakMb, 'MB'));
      rows.push([format, bytes.byteLength, parts.length, Math.round(median(ours)), Math.round(median(plain)), peakMb]);
    }
    // PDF: the page-by-page reader against plain pdf.js, as the ingestion benchmark measures it.
    ctx.log('formats: pdf');
    const pdf = await makeTextPdf(100);
    const ours: number[] = [];
    const plain: number[] = [];
    const read = () => extractText(pdf.slice(), { maxPages: 1000, onPage: () => undefined });
    await read();
    await plainExtraction(pdf);
    for (let k = 0; k < RUNS; k++) {
      ours.push(await timed(read));
      plain.push((await plainExtraction(pdf)).ms);
    }
    checks.push(
      ratioCheck('pdf: pages/s', (100 / median(ours)) * 1000, (100 / median(plain)) * 1000, 'pages/s', {
        min: RATIO_MIN,
      }),
    );
    rows.push(['pdf', pdf.byteLength, 100, Math.round(median(ours)), Math.round(median(plain)), '']);
    return {
      checks,
      details: [
        {
          title: 'Documents read (median of runs)',
          header: ['format', 'bytes', 'parts', 'reader ms', 'plain library ms', 'child peak MB'],
          rows,
        },
      ],
      notes: [
        `${RUNS} runs each, interleaved, after ${WARM_UPS} warm-ups; the reader in this process (its bounds and structure included), the plain library on the same bytes; peak memory from one read in the bounded child.`,
      ],
    };
  },
};
