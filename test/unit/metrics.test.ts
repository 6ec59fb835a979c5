import { METRIC, SERVICE_NAME, serviceMetrics } from '#shared/observability/metrics.ts';
import { withReplyMetrics } from '#shared/ai/reply-metrics.ts';
import { createOfflineProvider } from '#shared/ai/offline-provider.ts';
import type { ChatInput } from '#shared/ai/types.ts';
import { emitted } from '#test/helpers/emf.ts';

// The service's metrics as CloudWatch reads them: EMF lines on stdout, each one metric set with
// its namespace, its dimensions and its values (shared/observability/metrics.ts); the model's replies measured
// around any provider (shared/ai/reply-metrics.ts).

test('a response is one line: requests, 4xx and 5xx under its route', async () => {
  const m = serviceMetrics('Test');
  const [notFound, failed, ok, ...rest] = await emitted(() => {
    m.response('GET /chat/{chatId}', 404);
    m.response('POST /message/logged-in', 502);
    m.response('GET /chat', 200);
  });
  expect(rest).toEqual([]);
  expect(notFound!._aws.CloudWatchMetrics).toEqual([
    {
      Namespace: 'Test',
      Dimensions: [['service', 'route']],
      Metrics: [METRIC.requests, METRIC.clientErrors, METRIC.serverErrors].map((Name) => ({ Name, Unit: 'Count' })),
    },
  ]);
  expect(notFound).toMatchObject({
    service: SERVICE_NAME,
    route: 'GET /chat/{chatId}',
    Requests: 1,
    ClientErrors: 1,
    ServerErrors: 0,
  });
  expect(failed).toMatchObject({ route: 'POST /message/logged-in', ClientErrors: 0, ServerErrors: 1 });
  expect(ok).toMatchObject({ route: 'GET /chat', Requests: 1, ClientErrors: 0, ServerErrors: 0 });
});

test('ingestion: a completed file gives tokens, pages and duration; a failure counts under its reason', async () => {
  const m = serviceMetrics('Test');
  const [done, failed] = await emitted(() => {
    m.ingestionCompleted({ tokens: 1200, pages: 7, durationMs: 3400 });
    m.ingestionFailed('NOT_PDF');
  });
  expect(done).toMatchObject({
    service: SERVICE_NAME,
    IngestionTokens: 1200,
    IngestionPages: 7,
    IngestionDuration: 3400,
  });
  expect(done!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service']]);
  expect(failed).toMatchObject({ reason: 'NOT_PDF', IngestionFailures: 1 });
  expect(failed!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'reason']]);
});

test('feedback: a change of rating is one line under the new rating (or removed); no change writes nothing', async () => {
  const m = serviceMetrics('Test');
  const lines = await emitted(() => {
    m.feedbackChanged(undefined, 'up');
    m.feedbackChanged('up', 'up');
    m.feedbackChanged('up', 'down');
    m.feedbackChanged('down', undefined);
    m.feedbackChanged(undefined, undefined);
  });
  expect(lines.map((l) => l._aws.CloudWatchMetrics)).toEqual(
    [METRIC.feedbackUp, METRIC.feedbackDown, METRIC.feedbackRemoved].map((Name) => [
      { Namespace: 'Test', Dimensions: [['service']], Metrics: [{ Name, Unit: 'Count' }] },
    ]),
  );
  expect(lines).toEqual([
    expect.objectContaining({ service: SERVICE_NAME, FeedbackUp: 1 }),
    expect.objectContaining({ FeedbackDown: 1 }),
    expect.objectContaining({ FeedbackRemoved: 1 }),
  ]);
});

test('without a namespace (npm start, tests) nothing is written', async () => {
  const m = serviceMetrics(undefined);
  expect(
    await emitted(() => {
      m.response('GET /chat', 500);
      m.reply({ tokens: 3, latencyMs: 1 });
    }),
  ).toEqual([]);
});

describe('replies measured around the provider', () => {
  const input: ChatInput = {
    system: 'You are helpful.',
    history: [],
    prompt: 'What is the notice period?',
    maxTokens: 64,
  };

  test('a streamed reply: its tokens, its duration and the wait for its first text, once it has ended', async () => {
    const provider = withReplyMetrics(createOfflineProvider({ maxInputs: 8, maxTokens: 1000 }), serviceMetrics('Test'));
    let usage = 0;
    const lines = await emitted(async () => {
      for await (const part of provider.streamReply(input)) if (part.type === 'usage') usage = part.usage.totalTokens;
    });
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(usage).toBeGreaterThan(0);
    expect(line).toMatchObject({ ReplyTokens: usage });
    expect(line.TimeToFirstToken as number).toBeGreaterThanOrEqual(0);
    expect(line.ModelLatency as number).toBeGreaterThanOrEqual(line.TimeToFirstToken as number);
  });

  test('a whole reply: tokens and duration, no time to first token', async () => {
    const provider = withReplyMetrics(createOfflineProvider({ maxInputs: 8, maxTokens: 1000 }), serviceMetrics('Test'));
    let tokens = 0;
    const lines = await emitted(async () => {
      tokens = (await provider.reply(input)).usage.totalTokens;
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ ReplyTokens: tokens });
    expect(lines[0]!.TimeToFirstToken).toBeUndefined();
    expect(lines[0]!.ModelLatency as number).toBeGreaterThanOrEqual(0);
  });

  test('a stream cut off by its reader records nothing', async () => {
    const provider = withReplyMetrics(createOfflineProvider({ maxInputs: 8, maxTokens: 1000 }), serviceMetrics('Test'));
    const lines = await emitted(async () => {
      for await (const part of provider.streamReply(input)) if (part.type === 'delta') break;
    });
    expect(lines).toEqual([]);
  });
});
