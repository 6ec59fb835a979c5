import { localConcurrency } from '#infra/local/runtime.ts';
import { pipelineStageList } from '#infra/routes.ts';

// How many batches of each pipeline stage the local runtime runs at once: Lambda's maximum,
// except pdf.js's reading, which shares this machine's cores (docs/DECISIONS.md, Extraction in
// ranges of pages).

const stage = (name: string) => pipelineStageList.find((s) => s.name === name)!;

test('pdf-extract runs as many ranges at once as the machine has cores, at least 2, at most its Lambda maximum', () => {
  const extract = stage('pdf-extract');
  expect(extract.maxConcurrency).toBe(8);
  expect(localConcurrency(extract, 1)).toBe(2);
  expect(localConcurrency(extract, 2)).toBe(2);
  expect(localConcurrency(extract, 4)).toBe(4);
  expect(localConcurrency(extract, 64)).toBe(8);
});

test('the other stages run at their Lambda maximum whatever the cores', () => {
  for (const s of pipelineStageList.filter((s) => s.name !== 'pdf-extract'))
    expect(localConcurrency(s, 2)).toBe(s.maxConcurrency);
});
