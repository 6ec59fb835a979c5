import { loadConfig } from '#shared/config/all.ts';
import { mayReadNext } from '#shared/pdf/bounded-child.ts';
import { extractLimits } from '#shared/ingestion/extract-stage.ts';

// When the extraction child that read a document reads the next one (docs/DECISIONS.md, A warm
// extraction child), with pdf-extract's limits at its memory (1536 MB: 1075 MB resident).

const limits = extractLimits(loadConfig({ TABLE_NAME: 'warm-child' }), { memoryMb: 1536 });
const MB = 1024;

test('a child resting where 300-page documents leave it reads the next document', () => {
  expect(limits.rssMb).toBe(1075);
  // Measured: a child's resident size after each 300-page document rises from ~170 MB and settles
  // at 275–297 MB (heap pages kept committed); a quarter of the limit (269 MB) replaced it every
  // sixth document, whose successor then read a document with pdf.js's code cold.
  for (const restingMb of [171, 212, 277, 297]) expect(mayReadNext(restingMb * MB, limits, 6)).toBe(true);
});

test('a child holding more than 40 % of the limit, or that read 20 documents, is replaced', () => {
  expect(mayReadNext(430 * MB, limits, 1)).toBe(true);
  expect(mayReadNext(431 * MB, limits, 1)).toBe(false);
  expect(mayReadNext(200 * MB, limits, 19)).toBe(true);
  expect(mayReadNext(200 * MB, limits, 20)).toBe(false);
});
