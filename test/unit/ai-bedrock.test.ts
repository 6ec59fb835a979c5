import { createBedrockProvider, converseRequest, type BedrockSettings } from '#shared/ai/bedrock-provider.ts';
import { embeddingModelSpec, foundationModelOfProfile, modelResources } from '#shared/ai/bedrock-models.ts';
import { AiProviderError } from '#shared/ai/errors.ts';
import { lexicalEmbedding } from '#shared/ai/lexical-embedding.ts';
import type { ChatInput, StreamPart } from '#shared/ai/types.ts';
import { eventStreamFrame, startBedrockTestServer, type BedrockTestServer } from '#test/helpers/bedrock-server.ts';
import { splitIntoDeltas } from '#test/helpers/openai-server.ts';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { until } from '#test/helpers/until.ts';
import { GREETING } from '#test/helpers/chat-input.ts';

// The Bedrock provider through the real SDK (@aws-sdk/client-bedrock-runtime) against the
// loopback stand-in (test/helpers/bedrock-server.ts): JSON for Converse and InvokeModel, binary
// event-stream frames for ConverseStream, errors as Bedrock sends them.

let bedrock: BedrockTestServer;
beforeAll(async () => {
  bedrock = await startBedrockTestServer();
});
afterAll(() => bedrock.close());
beforeEach(() => bedrock.reset());

const settings = (overrides: Partial<BedrockSettings> = {}): BedrockSettings => ({
  region: 'eu-central-1',
  endpoint: bedrock.url,
  chatModel: 'amazon.nova-lite-v1:0',
  embeddingModel: 'amazon.titan-embed-text-v2:0',
  embeddingConcurrency: 4,
  timeoutMs: 60_000, // generous: no call that should succeed times out on a loaded machine
  maxRetries: 2,
  embeddingBatchSize: 2048,
  embeddingBatchMaxTokens: 300_000,
  credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' },
  ...overrides,
});

const input = (overrides: Partial<ChatInput> = {}): ChatInput => ({
  system: 'You are terse.',
  history: GREETING,
  prompt: 'What is a fox?',
  maxTokens: 256,
  ...overrides,
});

async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const p of parts) out.push(p);
  return out;
}

const REPLY = 'A fox is a small wild canid with a bushy tail.';

test('the stand-in frames are what the SDK decodes: prelude, typed headers, payload, both CRCs', () => {
  const frame = eventStreamFrame(
    { ':message-type': 'event', ':event-type': 'messageStop' },
    Buffer.from('{"stopReason":"end_turn"}'),
  );
  const decoded = new EventStreamCodec(toUtf8, fromUtf8).decode(frame);
  expect(decoded.headers).toEqual({
    ':message-type': { type: 'string', value: 'event' },
    ':event-type': { type: 'string', value: 'messageStop' },
  });
  expect(Buffer.from(decoded.body).toString()).toBe('{"stopReason":"end_turn"}');
  const corrupt = Buffer.from(frame);
  corrupt[corrupt.length - 6]! ^= 1;
  expect(() => new EventStreamCodec(toUtf8, fromUtf8).decode(corrupt)).toThrow(/checksum/i);
});

test('a whole reply through Converse: system blocks, alternating turns, usage from the response; signed for bedrock in the region', async () => {
  bedrock.setReply(REPLY);
  const provider = createBedrockProvider(settings());
  const result = await provider.reply(input());
  expect(result.text).toBe(REPLY);
  const sent = bedrock.requests[0]!;
  expect([sent.operation, sent.modelId]).toEqual(['converse', 'amazon.nova-lite-v1:0']);
  expect(sent.body).toEqual({
    system: [{ text: 'You are terse.' }],
    messages: [
      { role: 'user', content: [{ text: 'Hi' }] },
      { role: 'assistant', content: [{ text: 'Hello.' }] },
      { role: 'user', content: [{ text: 'What is a fox?' }] },
    ],
    inferenceConfig: { maxTokens: 256 },
  });
  expect(String(sent.headers.authorization)).toMatch(
    /^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/eu-central-1\/bedrock\/aws4_request/,
  );
  const inputTokens = ['You are terse.', 'Hi', 'Hello.', 'What is a fox?'].reduce(
    (n, t) => n + Math.ceil(t.length / 4),
    0,
  );
  const outputTokens = splitIntoDeltas(REPLY).length;
  expect(result.usage).toEqual({
    promptTokens: inputTokens,
    completionTokens: outputTokens,
    totalTokens: inputTokens + outputTokens,
  });
});

test('Converse layout: every system message is a system block; neighbouring turns of one role share a message; leading assistant turns and empty texts are left out', () => {
  const out = converseRequest([
    { role: 'system', content: 'Rules.' },
    { role: 'assistant', content: 'left over from a trimmed history' },
    { role: 'user', content: 'Passages: [1] page 2 …' },
    { role: 'user', content: 'Earlier question' },
    { role: 'assistant', content: '' },
    { role: 'assistant', content: 'Earlier answer' },
    { role: 'system', content: 'More rules.' },
    { role: 'user', content: 'Question' },
  ]);
  expect(out).toEqual({
    system: [{ text: 'Rules.' }, { text: 'More rules.' }],
    messages: [
      { role: 'user', content: [{ text: 'Passages: [1] page 2 …' }, { text: 'Earlier question' }] },
      { role: 'assistant', content: [{ text: 'Earlier answer' }] },
      { role: 'user', content: [{ text: 'Question' }] },
    ],
  });
});

test('a file chat prompt is accepted by Bedrock however the passages are laid out (the stand-in enforces Converse rules)', async () => {
  const provider = createBedrockProvider(settings());
  const sources = [
    {
      fileId: 'f1',
      fileName: 'guide.pdf',
      page: 3,
      chunk: 0,
      score: 0.9,
      text: 'Foxes live in dens.',
      quote: 'Foxes live in dens.',
    },
  ];
  const result = await provider.reply(
    input({
      fileChat: true,
      sources,
      history: [
        { role: 'assistant', content: 'orphan' },
        { role: 'user', content: 'x' },
      ],
    }),
  );
  // The user turn after the passages and the prompt are one message of several blocks.
  expect(result.text).toMatch(/^You said: x\n[\s\S]*What is a fox\?$/);
  const body = bedrock.converseRequests()[0]!;
  expect(JSON.stringify(body)).toContain('Foxes live in dens.');
  expect(body.messages[0]!.role).toBe('user');
});

test('a streamed reply: one delta per contentBlockDelta in order, then the usage of the metadata event', async () => {
  bedrock.setReply(REPLY);
  const provider = createBedrockProvider(settings());
  const parts = await collect(provider.streamReply(input()));
  const deltas = parts.filter((p) => p.type === 'delta').map((p) => (p as { text: string }).text);
  expect(deltas).toEqual(splitIntoDeltas(REPLY));
  const usage = parts.at(-1)!;
  expect(usage).toEqual({
    type: 'usage',
    usage: { promptTokens: expect.any(Number), completionTokens: deltas.length, totalTokens: expect.any(Number) },
  });
  expect(bedrock.requests[0]!.operation).toBe('converse-stream');
});

test('throttling (429 ThrottlingException) and 5xx are retried with backoff; a 400 is not', async () => {
  const provider = createBedrockProvider(settings());
  bedrock.failNext(1, 'ThrottlingException');
  bedrock.failNext(1, 'ServiceUnavailableException');
  expect((await provider.reply(input())).text).toBe('You said: What is a fox?');
  expect(bedrock.requests).toHaveLength(3);

  bedrock.reset();
  bedrock.failNext(2, 'InternalServerException', { operation: 'converse-stream' });
  const parts = await collect(provider.streamReply(input()));
  expect(
    parts
      .filter((p) => p.type === 'delta')
      .map((p) => (p as { text: string }).text)
      .join(''),
  ).toBe('You said: What is a fox?');
  expect(bedrock.requests).toHaveLength(3);

  bedrock.reset();
  bedrock.failNext(1, 'ValidationException');
  const refused = await provider.reply(input()).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(AiProviderError);
  expect(refused).toMatchObject({ kind: 'failed', details: { status: 400 } });
  expect(bedrock.requests).toHaveLength(1);
});

test('throttling that outlasts the retries is a rate-limited failure (503 with retry-after upstream)', async () => {
  const provider = createBedrockProvider(settings({ maxRetries: 1 }));
  bedrock.failNext(2, 'ThrottlingException');
  const err = await provider.reply(input()).catch((e: unknown) => e);
  expect(err).toMatchObject({ kind: 'rate-limited', details: { status: 429 } });
  expect(bedrock.requests).toHaveLength(2);
});

test('an exception frame mid-stream ends the reply with a classified error after the deltas already sent', async () => {
  bedrock.setReply(REPLY);
  const provider = createBedrockProvider(settings());
  const parts: StreamPart[] = [];
  bedrock.streamExceptionAfter(3, 'modelStreamErrorException');
  const err = await (async () => {
    for await (const p of provider.streamReply(input())) parts.push(p);
  })().catch((e: unknown) => e);
  expect(parts.map((p) => (p as { text: string }).text)).toEqual(splitIntoDeltas(REPLY).slice(0, 3));
  expect(err).toBeInstanceOf(AiProviderError);
  expect(err).toMatchObject({ kind: 'unavailable' });

  bedrock.streamExceptionAfter(1, 'throttlingException');
  await expect(collect(provider.streamReply(input()))).rejects.toMatchObject({ kind: 'rate-limited' });
  // Mid-stream failures are not retried: the client already has part of the reply.
  expect(bedrock.requests).toHaveLength(2);
});

test('a connection cut mid-stream is the provider being unavailable', async () => {
  bedrock.setReply(REPLY);
  bedrock.cutStreamAfter(2);
  const provider = createBedrockProvider(settings());
  await expect(collect(provider.streamReply(input()))).rejects.toMatchObject({ kind: 'unavailable' });
});

test('the caller aborting ends the stream quietly and closes the connection to Bedrock', async () => {
  bedrock.setReply(REPLY);
  const release = bedrock.holdStreamAfter(2);
  const provider = createBedrockProvider(settings());
  const controller = new AbortController();
  const parts: StreamPart[] = [];
  for await (const p of provider.streamReply(input({ signal: controller.signal }))) {
    parts.push(p);
    if (parts.length === 2) controller.abort();
  }
  expect(parts).toHaveLength(2);
  release();
  const record = bedrock.requests[0]!;
  await until('the server to see the hang-up', () => record.clientClosedEarly);
  expect(record.clientClosedEarly).toBe(true);
});

test('a stream that goes quiet for timeoutMs is a timeout', async () => {
  bedrock.setReply(REPLY);
  const release = bedrock.holdStreamAfter(1);
  const provider = createBedrockProvider(settings({ timeoutMs: 1_000 }));
  await expect(collect(provider.streamReply(input()))).rejects.toMatchObject({ kind: 'timeout' });
  release();
});

test('Titan V2 embeddings: one text per InvokeModel, the configured dimensions, a bounded number in flight, vectors in order', async () => {
  const provider = createBedrockProvider(settings({ embeddingDimensions: 256, embeddingConcurrency: 3 }));
  expect(provider.embeddingDimensions).toBe(256);
  const texts = Array.from({ length: 10 }, (_, i) => `passage number ${i} about foxes and dens`);
  const { vectors, tokens } = await provider.embed(texts);
  expect(vectors.map((v) => v.length)).toEqual(texts.map(() => 256));
  expect(vectors.map((v) => Array.from(v))).toEqual(texts.map((t) => Array.from(lexicalEmbedding(t, 256))));
  expect(tokens).toBe(texts.reduce((n, t) => n + Math.ceil(t.length / 4), 0));
  const sent = bedrock.invokeRequests();
  expect(sent).toHaveLength(10);
  expect(sent[0]).toEqual({
    modelId: 'amazon.titan-embed-text-v2:0',
    body: { inputText: texts[0], dimensions: 256, normalize: true },
  });
  expect(bedrock.maxInFlight).toBeLessThanOrEqual(3);
  expect(bedrock.maxInFlight).toBeGreaterThan(1);
});

test('Titan V2: a refused text fails the call as permanent (status 400) and stops sending the rest', async () => {
  const provider = createBedrockProvider(settings({ embeddingConcurrency: 1 }));
  const err = await provider.embed(['fine', '', 'never sent']).catch((e: unknown) => e);
  expect(err).toMatchObject({ kind: 'failed', details: { status: 400 } });
  expect(bedrock.invokeRequests().map((r) => r.body.inputText)).toEqual(['fine', '']);
});

test('Cohere Embed v3: batches of at most 96 texts, cut to 2048 characters, 1024 dimensions', async () => {
  const provider = createBedrockProvider(settings({ embeddingModel: 'cohere.embed-english-v3' }));
  expect(provider.embeddingDimensions).toBe(1024);
  expect(provider.embeddingLimits.maxInputs).toBe(96);
  const texts = Array.from({ length: 200 }, (_, i) => (i === 5 ? 'long '.repeat(1000) : `chunk ${i}`));
  const { vectors } = await provider.embed(texts);
  expect(vectors).toHaveLength(200);
  expect(vectors[7]!.length).toBe(1024);
  expect(Array.from(vectors[199]!)).toEqual(Array.from(lexicalEmbedding('chunk 199', 1024)));
  const sent = bedrock.invokeRequests();
  expect(sent.map((r) => r.body.texts.length)).toEqual([96, 96, 8]);
  expect(sent[0]!.body).toMatchObject({ input_type: 'search_document', truncate: 'END' });
  expect(sent[0]!.body.texts[5]).toHaveLength(2048);
});

test('embedding retries throttling like chat', async () => {
  const provider = createBedrockProvider(settings());
  bedrock.failNext(1, 'ThrottlingException', { operation: 'invoke' });
  const { vectors } = await provider.embed(['one text']);
  expect(vectors).toHaveLength(1);
  expect(bedrock.invokeRequests()).toHaveLength(2);
});

test('model ids → IAM resources: foundation model, system inference profile, ARNs', () => {
  expect(modelResources('amazon.nova-lite-v1:0', 'us-east-1', '123456789012')).toEqual({
    invoked: ['arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-lite-v1:0'],
  });
  expect(modelResources('us.anthropic.claude-3-5-haiku-20241022-v1:0', 'us-west-2', '123456789012')).toEqual({
    invoked: ['arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0'],
    throughProfile: {
      profileArn:
        'arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0',
      foundationModelArns: ['arn:aws:bedrock:*::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0'],
    },
  });
  const app = 'arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile/abc123';
  expect(modelResources(app, 'us-east-1', '1')).toEqual({
    invoked: [app],
    throughProfile: { profileArn: app, foundationModelArns: ['arn:aws:bedrock:*::foundation-model/*'] },
  });
  expect(foundationModelOfProfile('meta.llama3-1-8b-instruct-v1:0')).toBeUndefined();
  expect(foundationModelOfProfile('global.anthropic.claude-sonnet-4-20250514-v1:0')).toBe(
    'anthropic.claude-sonnet-4-20250514-v1:0',
  );
  expect(embeddingModelSpec('amazon.titan-embed-text-v2:0')).toMatchObject({ dimensions: 1024, textsPerRequest: 1 });
});
