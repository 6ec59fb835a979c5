import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from '#test/helpers/openai-server.ts';
import { startPdfServer, type PdfServer } from '#test/helpers/pdf-server.ts';
import { postSse } from '#test/helpers/sse.ts';

// A file chat end to end with the OpenAI provider: a PDF ingested into the chat, then prompts
// whose replies are given the best passages (model context) and cite them (data.sources,
// `event: sources`).

let ai: OpenAiTestServer;
let pdfs: PdfServer;
let app: TestApp;
let token: string;
let chatId: string;
let fileId: string;

beforeAll(async () => {
  [ai, pdfs] = await Promise.all([startOpenAiTestServer(), startPdfServer()]);
  pdfs.serve('/animals.pdf', { body: Buffer.from(await makeTextPdf(3, 8)) });
  app = await startTestApp({ env: { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: ai.baseURL } });
  ({ token } = await app.signIn('files@example.com'));
  chatId = (await app.request('POST', '/chat', { token, body: { name: 'animals', type: 'file' } })).body.data.id;
  const upload = await app.request('POST', '/upload', { token, body: { fileName: 'animals.pdf', contentType: 'application/pdf', size: 5000 } });
  fileId = upload.body.data.fileId;
  const ingested = await app.request('POST', '/message/pdf', { token, body: { url: `${pdfs.url}/animals.pdf`, fileId, chatId } });
  expect(ingested.body.data.embeddingsData.status).toBe('completed');
});
afterAll(async () => {
  await app?.stop();
  await Promise.all([ai?.close(), pdfs?.close()]);
});
beforeEach(() => ai.reset());

test('a whole reply is given the matching passages and cites them with their pages', async () => {
  const sentence = knownSentence(2, 3);
  const res = await app.request('POST', '/message/logged-in', { token, body: { chatId, prompt: sentence } });
  expect(res.status).toBe(200);
  const { sources, response } = res.body.data;
  expect(response).toBe(`You said: ${sentence}`);
  expect(sources.length).toBeGreaterThan(0);
  expect(sources[0]).toEqual({ fileId, fileName: 'animals.pdf', page: 2, chunk: expect.any(Number), score: expect.any(Number), quote: expect.any(String) });
  expect(sources[0]).not.toHaveProperty('text');
  expect(sentence).toContain(sources[0].quote.trim().split(' ')[0]);

  // The model was given the passages, labelled with file and page, as data before the prompt.
  const messages = ai.chatRequests()[0]!.messages;
  expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
  const last = messages.at(-1)!.content;
  expect(last).toContain('<passage n="1" source="animals.pdf, page 2">');
  expect(last).toContain(sentence);
  expect(last.endsWith(`Question: ${sentence}`)).toBe(true);

  // The stored reply keeps its citations.
  const stored = (await app.request('GET', `/chat/${chatId}/messages`, { token })).body.data;
  expect(stored.at(-1)).toMatchObject({ messageType: 'ai', sources });
  // The attachment is in the chat's messages but not in what the model was sent as history.
  expect(stored.some((m: any) => m.type === 'file')).toBe(true);
  expect(messages.filter((m) => m.role === 'user')).toHaveLength(1);
});

test('a streamed reply ends with event: sources, then usage, then [DONE]', async () => {
  const sentence = knownSentence(3, 5);
  const sse = await postSse(`${app.url}/message/logged-in`, token, { chatId, prompt: sentence, stream: true });
  const names = sse.events.map((e) => e.event ?? (e.data === '[DONE]' ? '[DONE]' : 'delta'));
  expect(names.slice(-3)).toEqual(['sources', 'usage', '[DONE]']);
  const [sources] = sse.named('sources');
  expect(sources[0]).toMatchObject({ fileId, page: 3 });
  expect(sse.deltas().join('')).toBe(`You said: ${sentence}`);
});
