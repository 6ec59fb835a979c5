import { createAiProvider, describeAiProvider } from '#shared/ai/provider.ts';
import { createOfflineProvider, splitIntoParts } from '#shared/ai/offline-provider.ts';
import { LEXICAL_EMBEDDING_DIMENSIONS, lexicalEmbedding } from '#shared/ai/lexical-embedding.ts';
import { loadConfig } from '#shared/config/all.ts';
import type { ChatInput, Source, StreamPart } from '#shared/ai/types.ts';

// The offline provider: never an invented answer; lexical embeddings.

const offline = createOfflineProvider({ maxInputs: 2048, maxTokens: 300_000 });
const base: ChatInput = {
  system: 'You are helpful.',
  history: [],
  prompt: 'What is the notice period?',
  maxTokens: 256,
};
const source = (over: Partial<Source>): Source => ({
  fileId: 'f1',
  fileName: 'contract.pdf',
  page: 3,
  chunk: 7,
  score: 0.61,
  text: 'Either party may end this agreement with a notice period of thirty days, in writing.',
  quote: 'a notice period of thirty days',
  ...over,
});

const collect = async (parts: AsyncIterable<StreamPart>) => {
  const out: StreamPart[] = [];
  for await (const p of parts) out.push(p);
  return out;
};

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((n, v, i) => n + v * b[i]!, 0);

test('a text chat is told plainly that no language model is configured, and how to set one', async () => {
  const { text, usage } = await offline.reply(base);
  expect(text).toMatch(/No language model is configured/);
  expect(text).toMatch(/OPENAI_API_KEY/);
  expect(text).toMatch(/OPENAI_BASE_URL/);
  expect(text).not.toMatch(/thirty/);
  expect(usage.totalTokens).toBe(usage.promptTokens + usage.completionTokens);
  expect(usage.completionTokens).toBeGreaterThan(0);
});

test('a text chat quotes the earlier message closest to the prompt, and nothing when none shares words', async () => {
  const history = [
    { role: 'user' as const, content: 'The lease says the notice period is ninety days for tenants.' },
    { role: 'assistant' as const, content: 'Noted, ninety days.' },
    { role: 'user' as const, content: 'Unrelated: the weather is nice.' },
  ];
  const { text } = await offline.reply({ ...base, history, prompt: 'What notice period did the lease give?' });
  expect(text).toMatch(/No language model is configured/);
  expect(text).toContain('"The lease says the notice period is ninety days for tenants."');
  expect(text).not.toContain('weather');
  const none = await offline.reply({ ...base, history, prompt: 'Tell me about quantum chromodynamics' });
  expect(none.text).not.toContain('Earlier in this conversation');
});

test('a paced stream pauses between words, and an abort ends the pause at once', async () => {
  const paced = createOfflineProvider({ maxInputs: 8, maxTokens: 1000 }, { deltaDelayMs: 60_000 });
  const controller = new AbortController();
  const parts = paced.streamReply({ ...base, signal: controller.signal })[Symbol.asyncIterator]();
  const first = await parts.next();
  expect(first.value).toEqual({ type: 'delta', text: 'No ' });
  const second = parts.next(); // waits its pause
  controller.abort();
  expect((await second).done).toBe(true);
});

test('a file chat gets the best passages with their pages and files, labelled offline', async () => {
  const sources = [
    source({}),
    source({
      fileId: 'f2',
      fileName: undefined,
      page: 12,
      score: 0.2,
      quote: 'Notice must be given by registered mail.',
    }),
  ];
  const { text } = await offline.reply({ ...base, fileChat: true, sources });
  expect(text).toMatch(/^\[Offline mode/);
  expect(text).toContain('contract.pdf, page 3');
  expect(text).toContain('"a notice period of thirty days"');
  expect(text).toContain('file f2, page 12');
  expect(text.indexOf('page 3')).toBeLessThan(text.indexOf('page 12')); // best first
});

test('a file chat without a matching passage says it found nothing relevant', async () => {
  const { text } = await offline.reply({ ...base, fileChat: true, sources: [] });
  expect(text).toMatch(/Offline mode/);
  expect(text).toMatch(/found nothing relevant/);
});

test('long passages are cut at a word boundary', async () => {
  const long = 'word '.repeat(400);
  const { text } = await offline.reply({ ...base, fileChat: true, sources: [source({ quote: '', text: long })] });
  expect(text).toMatch(/word …"/);
  expect(text.length).toBeLessThan(1200);
});

test('streaming yields the same reply word by word, then usage', async () => {
  const whole = await offline.reply(base);
  const parts = await collect(offline.streamReply(base));
  const deltas = parts.filter((p) => p.type === 'delta').map((p) => (p as { text: string }).text);
  expect(deltas.length).toBe(whole.text.split(/\s+/).length);
  expect(deltas.every((d) => /^\S+\s*$/.test(d))).toBe(true);
  expect(deltas.join('')).toBe(whole.text);
  expect(parts.at(-1)).toEqual({ type: 'usage', usage: whole.usage });
});

test('an aborted stream stops yielding', async () => {
  const controller = new AbortController();
  controller.abort();
  expect(await collect(offline.streamReply({ ...base, signal: controller.signal }))).toEqual([]);
});

test('splitIntoParts keeps every character', () => {
  for (const text of ['', 'One.', 'One. Two! Three? Four\nfive six.', 'no punctuation at all here']) {
    expect(splitIntoParts(text).join('')).toBe(text);
  }
});

test('embeddings are deterministic, normalised, lexical', async () => {
  const { vectors, tokens } = await offline.embed([
    'The cat sat on the mat',
    'the CAT sat on the mat!',
    'Quarterly revenue grew by nine percent',
    '',
  ]);
  expect(vectors).toHaveLength(4);
  expect(vectors[0]).toHaveLength(LEXICAL_EMBEDDING_DIMENSIONS);
  expect(offline.embeddingDimensions).toBe(LEXICAL_EMBEDDING_DIMENSIONS);
  expect(tokens).toBeGreaterThan(0);
  expect(cosine(vectors[0]!, vectors[0]!)).toBeCloseTo(1, 5);
  expect(cosine(vectors[0]!, vectors[1]!)).toBeCloseTo(1, 5); // case and punctuation do not matter
  expect(cosine(vectors[0]!, vectors[2]!)).toBeLessThan(0.3);
  expect(Array.from(vectors[3]!).every((v) => v === 0)).toBe(true);
  expect(lexicalEmbedding('The cat sat on the mat')).toEqual(vectors[0]);
  // Word order matters a little (bigrams): a reordering is similar, not identical.
  const reordered = lexicalEmbedding('on the mat the cat sat');
  expect(cosine(vectors[0]!, reordered)).toBeGreaterThan(0.6);
  expect(cosine(vectors[0]!, reordered)).toBeLessThan(0.999);
});

test('the factory picks the offline provider without a key, OpenAI with one, and whatever AI_PROVIDER names', async () => {
  const offlineConfig = loadConfig({ TABLE_NAME: 't' });
  expect((await createAiProvider(offlineConfig)).name).toBe('offline');
  expect(describeAiProvider(offlineConfig)).toMatch(/^offline/);
  const openaiConfig = loadConfig({ TABLE_NAME: 't', OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
  const provider = await createAiProvider(openaiConfig);
  expect(provider).toMatchObject({
    name: 'openai',
    chatModel: 'gpt-4o-mini',
    embeddingModel: 'text-embedding-3-small',
    embeddingDimensions: 1536,
  });
  expect(describeAiProvider(openaiConfig)).toBe(
    'OpenAI-compatible (chat gpt-4o-mini, embeddings text-embedding-3-small at http://127.0.0.1:9/v1)',
  );
  expect(
    (
      await createAiProvider(
        loadConfig({ TABLE_NAME: 't', OPENAI_API_KEY_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:1:secret:k' }),
      )
    ).name,
  ).toBe('openai');
  // An explicit choice wins over the key.
  expect(
    (await createAiProvider(loadConfig({ TABLE_NAME: 't', OPENAI_API_KEY: 'k', AI_PROVIDER: 'offline' }))).name,
  ).toBe('offline');
  const bedrockConfig = loadConfig({
    TABLE_NAME: 't',
    OPENAI_API_KEY: 'k',
    AI_PROVIDER: 'bedrock',
    BEDROCK_REGION: 'eu-west-1',
    BEDROCK_EMBEDDING_DIMENSIONS: '512',
  });
  expect(await createAiProvider(bedrockConfig)).toMatchObject({
    name: 'bedrock',
    chatModel: 'amazon.nova-lite-v1:0',
    embeddingModel: 'amazon.titan-embed-text-v2:0',
    embeddingDimensions: 512,
  });
  expect(describeAiProvider(bedrockConfig)).toBe(
    'Amazon Bedrock (chat amazon.nova-lite-v1:0, embeddings amazon.titan-embed-text-v2:0 (512 dimensions) in eu-west-1)',
  );
});

test('settings that contradict each other stop start-up with a message naming them', () => {
  expect(() => loadConfig({ TABLE_NAME: 't', AI_PROVIDER: 'openai' })).toThrow(
    'AI_PROVIDER: openai needs OPENAI_API_KEY',
  );
  expect(() =>
    loadConfig({
      TABLE_NAME: 't',
      BEDROCK_EMBEDDING_MODEL: 'cohere.embed-english-v3',
      BEDROCK_EMBEDDING_DIMENSIONS: '256',
    }),
  ).toThrow('BEDROCK_EMBEDDING_DIMENSIONS: cohere.embed-english-v3 always returns 1024 dimensions');
  expect(() => loadConfig({ TABLE_NAME: 't', BEDROCK_EMBEDDING_DIMENSIONS: '300' })).toThrow(
    /BEDROCK_EMBEDDING_DIMENSIONS/,
  );
  expect(() => loadConfig({ TABLE_NAME: 't', AI_PROVIDER: 'anthropic' })).toThrow(/AI_PROVIDER/);
});
