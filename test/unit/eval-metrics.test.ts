import { createAiProvider } from '#shared/ai/provider.ts';
import { loadConfig } from '#shared/config/all.ts';
import { type OpenAiTestServer, startOpenAiTestServer } from '#test/helpers/openai-server.ts';
import { judgeScore, makeJudge } from '../../bench/lib/eval-judge.ts';
import { evalFigures, firstHit, markersOf, quantile, type ScoredQuestion } from '../../bench/lib/eval-metrics.ts';

// The eval's figures on a tiny fixed set whose answers are worked out by hand, and its judge.

const q = (over: Partial<ScoredQuestion>): ScoredQuestion => ({
  file: 'a.pdf',
  pages: [2],
  sources: [],
  answer: '',
  latencyMs: 100,
  ...over,
});

const SET: ScoredQuestion[] = [
  // First source answers: rank 1. Markers [1] (verified, answering) and [2] (other page): 1 of 2 good.
  q({
    sources: [
      { fileName: 'a.pdf', page: 2, verified: true },
      { fileName: 'a.pdf', page: 5, verified: true },
    ],
    answer: 'It is so [1], see also [2].',
    latencyMs: 100,
    judge: { groundedness: 5, relevance: 4 },
  }),
  // Answering source at rank 4 (the same page of another file does not count). Marker [4] is on
  // the answering page but not verified: not good. Marker [9] points at no source: not good.
  q({
    pages: [3],
    sources: [
      { fileName: 'b.pdf', page: 3, verified: true },
      { fileName: 'a.pdf', page: 1, verified: true },
      { fileName: 'a.pdf', page: 2, verified: true },
      { fileName: 'a.pdf', page: 3, verified: false },
    ],
    answer: 'Maybe [4][9].',
    latencyMs: 300,
    judge: { groundedness: 2, relevance: 3 },
  }),
  // No answering source at all; no markers; not judged.
  q({ sources: [{ fileName: 'a.pdf', page: 7, verified: true }], answer: 'No idea.', latencyMs: 200 }),
  // Rank 2, one marker [1, 2]: source 2 is good, source 1 not.
  q({
    file: 'c.pdf',
    pages: [1, 4],
    sources: [
      { fileName: 'c.pdf', page: 2, verified: true },
      { fileName: 'c.pdf', page: 4, verified: true },
    ],
    answer: 'Both [1, 2] say so, and more words here.',
    latencyMs: 1000,
  }),
];

test('markers, first hits and quantiles', () => {
  expect(markersOf('a [1] b [2, 3] c [4][5] d [x] [1000]')).toEqual([1, 2, 3, 4, 5]);
  expect(SET.map(firstHit)).toEqual([1, 4, undefined, 2]);
  expect(quantile([5, 1, 3], 0.5)).toBe(3);
  expect(quantile([1, 2, 3, 4], 0.95)).toBe(4);
  expect(quantile([], 0.5)).toBeNaN();
});

test('recall@k, MRR, citation precision, answer length, latency and the judge means of the fixed set', () => {
  expect(evalFigures(SET)).toEqual({
    questions: 4,
    recall: { 1: 0.25, 3: 0.5, 5: 0.75, 8: 0.75 },
    mrr: (1 + 1 / 4 + 0 + 1 / 2) / 4,
    citationPrecision: 2 / 6, // [1] of the first and [2] of the last are good, of 6 markers
    markers: 6,
    answerChars: 'Maybe [4][9].'.length, // lengths 27, 13, 8, 40: the 2nd smallest of 4 by nearest rank
    latencyP50: 200,
    latencyP95: 1000,
    groundedness: 3.5,
    relevance: 3.5,
    judged: 2,
  });
});

test('an empty set gives no figures rather than zeros', () => {
  const f = evalFigures([]);
  expect([f.questions, f.mrr, f.citationPrecision, f.recall[8], f.groundedness]).toEqual([0, NaN, NaN, NaN, NaN]);
});

describe('the judge (the configured model, here the loopback OpenAI-compatible server)', () => {
  let ai: OpenAiTestServer;
  beforeAll(async () => {
    ai = await startOpenAiTestServer();
  });
  afterAll(() => ai.close());

  test('asks for groundedness with the numbered sources and for relevance, and reads the first-line digits', async () => {
    const provider = await createAiProvider(
      loadConfig({ TABLE_NAME: 't', OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: ai.baseURL, OPENAI_MAX_RETRIES: '0' }),
    );
    ai.setReply((req) => (JSON.stringify(req.messages).includes('supported by its sources') ? '4\nmostly' : '2'));
    const judge = makeJudge(provider);
    const scores = await judge('Who keeps the light?', 'Margaret Hollis [1].', [
      { fileName: 'scan.pdf', page: 3, quote: 'The lighthouse keeper is named Margaret Hollis.' },
    ]);
    expect(scores).toEqual({ groundedness: 4, relevance: 2 });
    const prompts = ai.chatRequests().map((r) => JSON.stringify(r.messages));
    expect(
      prompts.some((p) => p.includes('[1] (scan.pdf, page 3) The lighthouse keeper is named Margaret Hollis.')),
    ).toBe(true);
    // A reply without a score leaves the question unscored.
    ai.setReply('I cannot say.');
    expect(await judge('Who?', 'No one.', [])).toBeUndefined();
    expect([judgeScore('5'), judgeScore(' 3 because'), judgeScore('10'), judgeScore('six')]).toEqual([
      5,
      3,
      undefined,
      undefined,
    ]);
  });
});
