import { useTestApp } from '#test/helpers/app.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { lastUserText } from '#test/helpers/bedrock-server.ts';
import { splitIntoDeltas } from '#test/helpers/openai-server.ts';
import { chatCalls, eventually, expectStreamedReply, kinds } from '#test/helpers/chat-calls.ts';

// The README's chat and PDF flows end to end with AI_PROVIDER=bedrock: the local gateway and
// handlers, the real Bedrock SDK pointed at the loopback stand-in (Converse, ConverseStream's
// event-stream frames, InvokeModel for Titan V2 embeddings), SigV4 with the runtime's dummy keys.

const app = useTestApp(
  {
    model: 'bedrock',
    user: 'bedrock@example.com',
    env: {
      BEDROCK_REGION: 'eu-west-1',
      BEDROCK_CHAT_MODEL: 'us.amazon.nova-lite-v1:0',
      BEDROCK_EMBEDDING_DIMENSIONS: '512',
      BEDROCK_EMBEDDING_CONCURRENCY: '3',
      // Reached on purpose: a reply outlives its client, so the held stream of the client that goes
      // away ends by this deadline. Long enough that no answering call reaches it on a loaded machine.
      BEDROCK_TIMEOUT_MS: '5000',
      BEDROCK_MAX_RETRIES: '2',
      STREAM_HEARTBEAT_MS: '150',
    },
  },
  { timeout: 60_000 },
);
beforeEach(() => app.bedrock.reset());

const REPLY = 'Bedrock says the fox jumps over the lazy dog.';
const { newChat, stream, leaveAfter, history } = chatCalls(() => ({ app, token: app.token }));

test('a whole reply through Converse, with the usage Bedrock reported stored beside it', async () => {
  const chat = await newChat({ type: 'text', systemMessage: 'Answer in one line.' });
  app.bedrock.setReply(REPLY);
  const res = await app.request('POST', '/message/logged-in', {
    token: app.token,
    body: { chatId: chat.id, prompt: 'Hello' },
  });
  expect(res.status).toBe(200);
  expect(res.body.data.response).toBe(REPLY);
  const sent = app.bedrock.requests[0]!;
  expect([sent.operation, sent.modelId]).toEqual(['converse', 'us.amazon.nova-lite-v1:0']);
  expect(sent.body.system).toEqual([{ text: 'Answer in one line.' }]);
  expect(sent.body.messages).toEqual([{ role: 'user', content: [{ text: 'Hello' }] }]);
  expect(String(sent.headers.authorization)).toMatch(/\/eu-west-1\/bedrock\/aws4_request/);
  const inputTokens = Math.ceil('Answer in one line.'.length / 4) + Math.ceil('Hello'.length / 4);
  const usage = {
    promptTokens: inputTokens,
    completionTokens: splitIntoDeltas(REPLY).length,
    totalTokens: inputTokens + splitIntoDeltas(REPLY).length,
  };
  expect(res.body.data.usage).toEqual(usage);
  expect((await history(chat.id)).at(-1)).toMatchObject({ messageType: 'ai', message: REPLY, usage });

  // The next prompt carries the history as alternating turns.
  await app.request('POST', '/message/logged-in', { token: app.token, body: { chatId: chat.id, prompt: 'And then?' } });
  expect(app.bedrock.requests[1]!.body.messages.map((m: any) => [m.role, m.content[0].text])).toEqual([
    ['user', 'Hello'],
    ['assistant', REPLY],
    ['user', 'And then?'],
  ]);
});

test('a streamed reply: one SSE event per contentBlockDelta, the metadata usage, [DONE]; stored', async () => {
  const chat = await newChat();
  app.bedrock.setReply(REPLY);
  const sse = await stream(chat.id, 'Tell me about the fox');
  const usage = expectStreamedReply(sse, REPLY);
  expect(usage.completionTokens).toBe(splitIntoDeltas(REPLY).length);
  expect(app.bedrock.requests[0]!.operation).toBe('converse-stream');
  const stored = await history(chat.id);
  expect(stored.at(-1)).toMatchObject({ messageType: 'ai', message: REPLY, usage });
  expect(stored.at(-1)).not.toHaveProperty('incomplete');
});

test('throttling is retried with backoff; throttling that persists is a 503 with retry-after', async () => {
  const chat = await newChat();
  app.bedrock.failNext(2, 'ThrottlingException');
  const ok = await app.request('POST', '/message/logged-in', {
    token: app.token,
    body: { chatId: chat.id, prompt: 'Patience' },
  });
  expect(ok.status).toBe(200);
  expect(ok.body.data.response).toBe('You said: Patience');
  expect(app.bedrock.requests).toHaveLength(3);

  app.bedrock.reset();
  app.bedrock.failNext(3, 'ThrottlingException');
  const busy = await app.request('POST', '/message/logged-in', {
    token: app.token,
    body: { chatId: chat.id, prompt: 'Again' },
  });
  expect(busy.status).toBe(503);
  expect(busy.body).toMatchObject({
    success: false,
    statusCode: 503,
    message: 'The AI provider is busy (rate limited); try again shortly',
  });
  expect(busy.headers.get('retry-after')).toMatch(/^\d+$/);

  app.bedrock.reset();
  app.bedrock.failNext(1, 'ServiceUnavailableException', { operation: 'converse-stream' });
  // (The unanswered 'Again' stays in the history: Converse gets it and this prompt as one user turn.)
  const sse = await stream(chat.id, 'Streamed after a 503');
  expect(sse.deltas().join('')).toBe('You said: Again\nStreamed after a 503');
  expect(app.bedrock.requests).toHaveLength(2);
});

test('an exception frame mid-stream becomes event: error after the deltas already sent; the partial reply is kept', async () => {
  const chat = await newChat();
  app.bedrock.setReply(REPLY);
  app.bedrock.streamExceptionAfter(3, 'modelStreamErrorException');
  const sse = await stream(chat.id, 'Break please');
  expect(sse.status).toBe(200);
  expect(sse.deltas()).toEqual(splitIntoDeltas(REPLY).slice(0, 3));
  expect(kinds(sse).slice(-2)).toEqual(['event:error', '[DONE]']);
  expect(sse.named('error')).toEqual([{ message: 'The AI provider is unavailable' }]);
  const stored = await history(chat.id);
  expect(stored.at(-1)).toMatchObject({
    messageType: 'ai',
    message: splitIntoDeltas(REPLY).slice(0, 3).join(''),
    incomplete: true,
  });
});

test('when the client goes away the ConverseStream call is aborted and what was generated is stored', async () => {
  const chat = await newChat();
  app.bedrock.setReply(REPLY);
  const release = app.bedrock.holdStreamAfter(2);
  await leaveAfter(chat.id, 'I will leave', 2);
  const upstream = await eventually(
    async () => app.bedrock.requests.at(-1)!,
    (r) => r.clientClosedEarly,
  );
  expect(upstream.clientClosedEarly).toBe(true);
  release();
  // The reply is in the history while it is generated (status streaming): wait for its end.
  const stored = await eventually(
    () => history(chat.id),
    (m) => m.length === 2 && m[1].status !== 'streaming',
  );
  expect(stored[1]).toMatchObject({
    messageType: 'ai',
    message: splitIntoDeltas(REPLY).slice(0, 2).join(''),
    incomplete: true,
  });
});

test("the README's PDF flow: upload, ingest with Titan V2 embeddings (512 dimensions), then cited answers whole and streamed", async () => {
  // POST /upload → PUT the bytes to the presigned URL → POST /message/pdf with the download URL.
  const pdf = Buffer.from(await makeTextPdf(3, 8));
  const up = await app.request('POST', '/upload', {
    token: app.token,
    body: { fileName: 'animals.pdf', contentType: 'application/pdf', size: pdf.length },
  });
  expect(up.status).toBe(201);
  const { fileId, uploadUrl, downloadUrl, uploadHeaders } = up.body.data;
  expect((await fetch(uploadUrl, { method: 'PUT', headers: uploadHeaders, body: pdf })).status).toBe(200);
  const chat = await newChat({ type: 'file', name: 'animals' });
  const ingested = await app.request('POST', '/message/pdf', {
    token: app.token,
    body: { url: downloadUrl, fileId, chatId: chat.id },
  });
  expect(ingested.status).toBe(200);
  const data = ingested.body.data.embeddingsData;
  expect(data).toMatchObject({
    fileId,
    status: 'completed',
    pages: 3,
    model: 'amazon.titan-embed-text-v2:0',
    dimensions: 512,
  });
  // One InvokeModel per chunk, each asking for 512 dimensions, never more than 3 at once per call.
  const embeds = app.bedrock.invokeRequests();
  expect(embeds.length).toBe(data.chunks);
  expect(
    embeds.every(
      (r) => r.modelId === 'amazon.titan-embed-text-v2:0' && r.body.dimensions === 512 && r.body.normalize === true,
    ),
  ).toBe(true);
  expect(data.tokens).toBeGreaterThan(0);

  // A whole reply: the prompt is embedded with the same model, the passages go to the model, the reply cites them.
  app.bedrock.reset();
  const sentence = knownSentence(2, 3);
  const res = await app.request('POST', '/message/logged-in', {
    token: app.token,
    body: { chatId: chat.id, prompt: sentence },
  });
  expect(res.status).toBe(200);
  const { sources } = res.body.data;
  expect(sources[0]).toMatchObject({ fileId, fileName: 'animals.pdf', page: 2 });
  expect(app.bedrock.invokeRequests().map((r) => r.body.inputText)).toEqual([sentence]);
  const converse = app.bedrock.converseRequests()[0]!;
  expect(JSON.stringify(converse)).toContain('animals.pdf, page 2');
  expect(JSON.stringify(converse)).toContain(sentence);
  expect(lastUserText(converse)).toContain(sentence);

  // Streamed: deltas, then the citations, then usage.
  const sse = await stream(chat.id, knownSentence(3, 5));
  expect(kinds(sse).slice(-3)).toEqual(['event:citations', 'event:usage', '[DONE]']);
  // The echo reply marks no [n], so nothing is cited (the citations event lists what the reply cites).
  expect(sse.named('citations')).toEqual([{ cited: [] }]);
}, 60_000);
