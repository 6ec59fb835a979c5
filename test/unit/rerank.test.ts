import { jest } from '@jest/globals';
import { loadConfig } from '#shared/config/all.ts';
import { createBedrockReranker, rerankModelArn } from '#shared/retrieval/rerank/bedrock-reranker.ts';
import { createCohereReranker, rerankEndpoint } from '#shared/retrieval/rerank/cohere-reranker.ts';
import { createOfflineReranker, offlineScores } from '#shared/retrieval/rerank/offline-reranker.ts';
import { type Reranker, rerankerFor, rerankStage } from '#shared/retrieval/rerank/reranker.ts';
import { termRarity, buildLexicalIndex } from '#shared/retrieval/lexical-index.ts';
import { queryTerms } from '#shared/retrieval/terms.ts';
import {
  type BedrockRerankTestServer,
  type CohereRerankTestServer,
  startBedrockRerankTestServer,
  startCohereRerankTestServer,
} from '#test/helpers/rerank-servers.ts';

// The rerank stage: each reranker's request as its API documents it (checked by the loopback
// stand-ins, test/helpers/rerank-servers.ts), its order used, and every failure (an error status,
// a timeout, an answer that is not an order) keeping the retrieval order, logged as a warning.

const PASSAGES = [
  { text: 'The garbage collector of the interpreter is a simple mark and sweep design.' },
  {
    text: 'Tracing starts when a loop becomes hot: after two iterations the recorder is switched on.',
    section: '3 Tracing',
  },
  { text: 'Benchmarks ran on a MacBook Pro. The largest speedup was on bitwise operations.' },
  { text: 'Loops become hot after a few iterations; hot loops are traced by the recorder.' },
];
const QUERY = 'When is a loop considered hot and traced?';

/** The warnings the logger writes while `run` runs (its JSON lines; warnings go to stderr). */
async function warnings(run: () => Promise<unknown>): Promise<Record<string, any>[]> {
  const lines: string[] = [];
  const spies = [process.stdout, process.stderr].map((stream) =>
    jest.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }),
  );
  try {
    await run();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return lines
    .flatMap((l) => l.split('\n'))
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, any>)
    .filter((l) => l.level === 'WARN');
}

describe('offline reranker', () => {
  test("ranks the passages holding the query's words near each other (and under a heading naming them) first", async () => {
    const reranker = createOfflineReranker();
    const results = await reranker.rerank({
      query: QUERY,
      passages: PASSAGES,
      topN: 4,
      signal: new AbortController().signal,
    });
    expect(results.map((r) => r.index)).toEqual([1, 3, 0, 2]);
    expect(results[0]!.score).toBeGreaterThan(results[1]!.score);
    // Nothing shared: the retrieval order is kept.
    const none = await reranker.rerank({
      query: 'zebra',
      passages: PASSAGES,
      topN: 2,
      signal: new AbortController().signal,
    });
    expect(none.map((r) => r.index)).toEqual([0, 1]);
  });

  test("weighs the query's words by their rarity in the searched files' lexical index", () => {
    const passages = [
      { text: 'The station Aldmoor lies high.' },
      { text: 'Every station lies high; rainfall by station.' },
    ];
    const index = buildLexicalIndex([
      ...passages.map((p) => p.text),
      ...Array.from({ length: 20 }, (_, i) => `Station ${i} is high.`),
    ]);
    const weights = termRarity([index], queryTerms('How high is the Aldmoor station?'));
    const [rare, common] = offlineScores({
      query: 'How high is the Aldmoor station?',
      passages,
      termWeights: () => weights,
    });
    expect(rare).toBeGreaterThan(common!);
  });
});

describe('rerankStage', () => {
  test('a reranker that answers an unusable order, or throws, leaves the retrieval order (logged)', async () => {
    const bad: Reranker = { name: 'bad', model: 'm', rerank: async () => [{ index: 7, score: 1 }] };
    const throws: Reranker = {
      name: 'throws',
      model: 'm',
      rerank: async () => {
        throw new Error('boom');
      },
    };
    let outcomes: Awaited<ReturnType<typeof rerankStage>>[] = [];
    const logged = await warnings(async () => {
      outcomes = [
        await rerankStage(bad, { query: QUERY, passages: PASSAGES, topN: 3 }, 1000),
        await rerankStage(throws, { query: QUERY, passages: PASSAGES, topN: 3 }, 1000),
      ];
    });
    expect(outcomes).toEqual([
      { order: [0, 1, 2], reranked: false },
      { order: [0, 1, 2], reranked: false },
    ]);
    expect(logged.map((l) => [l.message, l.reranker, l.error?.message])).toEqual([
      [
        'rerank failed; the retrieval order is kept',
        'bad',
        'the reranker answered an unusable index (7 of 4 passages)',
      ],
      ['rerank failed; the retrieval order is kept', 'throws', 'boom'],
    ]);
  });

  test('fewer results than wanted are followed by the rest in retrieval order; no reranker keeps the order', async () => {
    const short: Reranker = { name: 'short', model: 'm', rerank: async () => [{ index: 2, score: 0.9 }] };
    expect(await rerankStage(short, { query: QUERY, passages: PASSAGES, topN: 3 }, 1000)).toEqual({
      order: [2, 0, 1],
      reranked: true,
    });
    expect(await rerankStage(undefined, { query: QUERY, passages: PASSAGES, topN: 2 }, 1000)).toEqual({
      order: [0, 1],
      reranked: false,
    });
  });

  test('the configuration chooses the reranker; offline by default', () => {
    const base = { TABLE_NAME: 't' };
    expect(rerankerFor(loadConfig(base))?.name).toBe('offline');
    expect(rerankerFor(loadConfig({ ...base, RERANK_PROVIDER: 'none' }))).toBeUndefined();
    expect(rerankerFor(loadConfig({ ...base, RERANK_PROVIDER: 'bedrock' }))?.model).toBe('amazon.rerank-v1:0');
    expect(() => loadConfig({ ...base, RERANK_PROVIDER: 'cohere' })).toThrow(
      /RERANK_PROVIDER: cohere needs RERANK_URL/,
    );
  });
});

describe('Bedrock Rerank (loopback stand-in of bedrock-agent-runtime)', () => {
  let server: BedrockRerankTestServer;
  let reranker: Reranker;
  beforeAll(async () => {
    server = await startBedrockRerankTestServer();
    reranker = createBedrockReranker({
      region: 'us-west-2',
      endpoint: server.url,
      model: 'amazon.rerank-v1:0',
      credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' },
    });
  });
  afterEach(() => server.reset());
  afterAll(() => server.close());

  test("sends the documented request (one TEXT query, INLINE TEXT sources, the model's ARN) and uses its order", async () => {
    const outcome = await rerankStage(reranker, { query: QUERY, passages: PASSAGES, topN: 2 }, 5000);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.path).toBe('/rerank');
    expect(server.requests[0]!.body).toEqual({
      queries: [{ type: 'TEXT', textQuery: { text: QUERY } }],
      sources: PASSAGES.map((p) => ({
        type: 'INLINE',
        inlineDocumentSource: { type: 'TEXT', textDocument: { text: p.section ? `3 Tracing\n${p.text}` : p.text } },
      })),
      rerankingConfiguration: {
        type: 'BEDROCK_RERANKING_MODEL',
        bedrockRerankingConfiguration: {
          numberOfResults: 2,
          modelConfiguration: { modelArn: 'arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0' },
        },
      },
    });
    expect(outcome).toEqual({ order: [1, 3], reranked: true }); // the stand-in's word-overlap order
  });

  test('an error after its one retry (throttling) keeps the retrieval order, logged with the error', async () => {
    server.failNext(2, 'ThrottlingException');
    let outcome: Awaited<ReturnType<typeof rerankStage>> | undefined;
    const logged = await warnings(async () => {
      outcome = await rerankStage(reranker, { query: QUERY, passages: PASSAGES, topN: 2 }, 5000);
    });
    expect(outcome).toEqual({ order: [0, 1], reranked: false });
    expect(server.requests).toHaveLength(2);
    expect(logged.map((l) => [l.reranker, l.error?.name])).toEqual([['bedrock', 'ThrottlingException']]);
  });

  test('an unknown model is refused by the API (ResourceNotFoundException) and the order kept', async () => {
    const other = createBedrockReranker({
      region: 'us-west-2',
      endpoint: server.url,
      model: 'amazon.titan-embed-text-v2:0',
      credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' },
    });
    const logged = await warnings(async () => {
      expect(await rerankStage(other, { query: QUERY, passages: PASSAGES, topN: 2 }, 5000)).toEqual({
        order: [0, 1],
        reranked: false,
      });
    });
    expect(logged[0]?.error?.name).toBe('ResourceNotFoundException');
  });

  test('no answer within the deadline keeps the retrieval order, and the request is given up', async () => {
    const release = server.hold();
    const started = performance.now();
    const logged = await warnings(async () => {
      expect(await rerankStage(reranker, { query: QUERY, passages: PASSAGES, topN: 2 }, 150)).toEqual({
        order: [0, 1],
        reranked: false,
      });
    });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(logged.map((l) => l.error?.name)).toEqual(['RerankTimeout']);
    release();
  });

  test('model ids become foundation-model ARNs of their partition; ARNs pass unchanged', () => {
    expect(rerankModelArn('cohere.rerank-v3-5:0', 'eu-central-1')).toBe(
      'arn:aws:bedrock:eu-central-1::foundation-model/cohere.rerank-v3-5:0',
    );
    expect(rerankModelArn('amazon.rerank-v1:0', 'cn-north-1')).toBe(
      'arn:aws-cn:bedrock:cn-north-1::foundation-model/amazon.rerank-v1:0',
    );
    const arn = 'arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0';
    expect(rerankModelArn(arn, 'us-east-1')).toBe(arn);
  });
});

describe('Cohere-compatible rerank (loopback stand-in)', () => {
  let server: CohereRerankTestServer;
  const reranker = (over: Partial<Parameters<typeof createCohereReranker>[0]> = {}) =>
    createCohereReranker({ url: server.url, model: 'rerank-v3.5', apiKey: server.apiKey, ...over });
  beforeAll(async () => {
    server = await startCohereRerankTestServer();
  });
  afterEach(() => server.reset());
  afterAll(() => server.close());

  test('POST /v1/rerank with { model, query, documents, top_n } and the bearer key; its order is used', async () => {
    const outcome = await rerankStage(reranker(), { query: QUERY, passages: PASSAGES, topN: 3 }, 5000);
    expect(server.requests).toHaveLength(1);
    const [req] = server.requests;
    expect(req!.path).toBe('/v1/rerank');
    expect(req!.headers.authorization).toBe(`Bearer ${server.apiKey}`);
    expect(req!.body).toEqual({
      model: 'rerank-v3.5',
      query: QUERY,
      documents: PASSAGES.map((p) => (p.section ? `3 Tracing\n${p.text}` : p.text)),
      top_n: 3,
    });
    expect(outcome).toEqual({ order: [1, 3, 0], reranked: true }); // the stand-in's word-overlap order
  });

  test('a URL ending in /rerank is the endpoint itself (Cohere v2)', async () => {
    expect(rerankEndpoint('https://api.cohere.com')).toBe('https://api.cohere.com/v1/rerank');
    expect(rerankEndpoint('http://localhost:8080/api/')).toBe('http://localhost:8080/api/v1/rerank');
    await rerankStage(
      reranker({ url: `${server.url}/v2/rerank` }),
      { query: QUERY, passages: PASSAGES, topN: 1 },
      5000,
    );
    expect(server.requests.map((r) => r.path)).toEqual(['/v2/rerank']);
  });

  test.each([
    ['a wrong key (401)', { apiKey: 'wrong' }, undefined, 'rerank API answered 401: invalid api token'],
    [
      'an unknown model (404)',
      { model: 'rerank-nope' },
      undefined,
      "rerank API answered 404: model 'rerank-nope' not found",
    ],
    ['a rate limit (429)', {}, 429 as const, 'rerank API answered 429: You are using a Trial key'],
    ['a server error (503)', {}, 503 as const, 'rerank API answered 503: Simulated 503'],
    ['an answer that is not JSON', {}, 'not-json' as const, 'rerank API answered something that is not JSON'],
  ])('%s keeps the retrieval order, logged with the message', async (_name, over, fault, message) => {
    if (fault) server.failNext(1, fault);
    let outcome: Awaited<ReturnType<typeof rerankStage>> | undefined;
    const logged = await warnings(async () => {
      outcome = await rerankStage(reranker(over), { query: QUERY, passages: PASSAGES, topN: 2 }, 5000);
    });
    expect(outcome).toEqual({ order: [0, 1], reranked: false });
    expect(logged).toHaveLength(1);
    expect(logged[0]!.error.message).toContain(message);
  });

  test('no answer within the deadline keeps the retrieval order', async () => {
    const release = server.hold();
    const logged = await warnings(async () => {
      expect(await rerankStage(reranker(), { query: QUERY, passages: PASSAGES, topN: 2 }, 150)).toEqual({
        order: [0, 1],
        reranked: false,
      });
    });
    expect(logged.map((l) => [l.reranker, l.error?.name])).toEqual([['cohere', 'RerankTimeout']]);
    release();
  });
});
