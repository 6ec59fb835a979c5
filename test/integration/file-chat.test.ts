import { useTestApp } from '#test/helpers/app.ts';
import { fileChatWith } from '#test/helpers/files.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { splitIntoDeltas } from '#test/helpers/openai-server.ts';
import { postSse } from '#test/helpers/sse.ts';

// A file chat end to end with the OpenAI provider: a PDF ingested into the chat, then prompts
// whose replies are given the best passages (model context) and cite them (data.sources,
// `event: sources`).

let chatId: string;
let fileId: string;

const app = useTestApp(
  async () => ({
    model: 'openai',
    pdfs: { '/animals.pdf': { body: Buffer.from(await makeTextPdf(3, 8)) } },
    user: 'files@example.com',
  }),
  {
    ready: async (app) => {
      ({ chatId, fileId } = await fileChatWith(app, app.token, '/animals.pdf', 'animals'));
    },
  },
);
beforeEach(() => app.ai.reset());

/** The usage the loopback server reports for a chat request and its reply (its own formula). */
/** A new file chat with the animals PDF attached (a chat of its own: no history). */
async function newChat(name: string): Promise<string> {
  const { body } = await app.request('POST', '/chat', { token: app.token, body: { name, type: 'file' } });
  await app.request('POST', '/message/pdf', {
    token: app.token,
    body: { url: `${app.pdfs.url}/animals.pdf`, fileId, chatId: body.data.id },
  });
  return body.data.id;
}

const serverUsage = (messages: { content: string }[], reply: string) => {
  const promptTokens = messages.reduce((n, m) => n + Math.max(1, Math.ceil(m.content.length / 4)) + 3, 0);
  const completionTokens = splitIntoDeltas(reply).length;
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
};

test('a whole reply is given the matching passages as data and cites them; markers naming no source are removed', async () => {
  const sentence = knownSentence(2, 3);
  app.ai.setReply('The folio says so [1], see also [7].');
  const res = await app.request('POST', '/message/logged-in', { token: app.token, body: { chatId, prompt: sentence } });
  expect(res.status).toBe(200);
  const { sources, response } = res.body.data;
  expect(response).toBe('The folio says so [1], see also .');
  expect(sources.length).toBeGreaterThan(0);
  expect(sources[0]).toEqual({
    fileId,
    fileName: 'animals.pdf',
    page: 2,
    part: 2,
    location: { type: 'page', page: 2 },
    chunk: expect.any(Number),
    score: expect.any(Number),
    quote: expect.any(String),
    charStart: expect.any(Number),
    charEnd: expect.any(Number),
    boxes: [expect.objectContaining({ x: expect.any(Number) })],
    verified: true,
    cited: true,
  });
  expect(sources.slice(1).every((s: { cited: boolean }) => s.cited === false)).toBe(true);
  expect(sources[0]).not.toHaveProperty('text');
  expect(sentence).toContain(sources[0].quote.trim().split(' ')[0]);

  // The model was given the passages, labelled with file and page, as data before the prompt.
  const messages = app.ai.chatRequests()[0]!.messages;
  expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
  const last = messages.at(-1)!.content;
  expect(last).toContain('<passage n="1" source="animals.pdf, page 2">');
  expect(last).toContain(sentence);
  expect(last.endsWith(`Question: ${sentence}`)).toBe(true);

  // The stored reply keeps its checked text and flagged citations.
  const stored = (await app.request('GET', `/chat/${chatId}/messages`, { token: app.token })).body.data;
  expect(stored.at(-1)).toMatchObject({ messageType: 'ai', message: response, sources });
  // The attachment is in the chat's messages but not in what the model was sent as history.
  expect(stored.some((m: any) => m.type === 'file')).toBe(true);
});

test('a streamed reply sends event: sources before any delta, then event: citations, usage and [DONE]', async () => {
  const sentence = knownSentence(3, 5);
  app.ai.setReply('It is on page three [1] and nowhere else [12].');
  const streamChat = await newChat('stream');
  const sse = await postSse(`${app.url}/message/logged-in`, app.token, {
    chatId: streamChat,
    prompt: sentence,
    stream: true,
  });
  const names = sse.events.map((e) => e.event ?? (e.data === '[DONE]' ? '[DONE]' : 'delta'));
  expect(names.slice(0, 2)).toEqual(['start', 'sources']); // sources before any delta
  expect(names.slice(-3)).toEqual(['citations', 'usage', '[DONE]']);
  const [sources] = sse.named('sources');
  expect(sources.some((s: { page: number }) => s.page === 3)).toBe(true);
  // The server split "[12]." into its own delta; the invalid marker never reached the client.
  expect(sse.deltas().join('')).toBe('It is on page three [1] and nowhere else .');
  expect(sse.named('citations')).toEqual([{ cited: [1] }]);
  const stored = (await app.request('GET', `/chat/${streamChat}/messages`, { token: app.token })).body.data.at(-1);
  expect(stored.sources[0].cited).toBe(true);
});

test('a follow-up is rewritten by the model into a standalone question, which retrieves; its tokens count in usage', async () => {
  const followChat = await newChat('follow-up');
  const target = knownSentence(3, 5);
  app.ai.setReply('Page three talks about it [1].');
  expect(
    (
      await app.request('POST', '/message/logged-in', {
        token: app.token,
        body: { chatId: followChat, prompt: target },
      })
    ).status,
  ).toBe(200);

  app.ai.reset();
  app.ai.setReply((req) => (req.messages[0]!.content.includes('standalone') ? target : 'Here is more [1].'));
  const res = await app.request('POST', '/message/logged-in', {
    token: app.token,
    body: { chatId: followChat, prompt: 'Tell me more about that.' },
  });
  expect(res.status).toBe(200);
  const [rewrite, answer] = app.ai.chatRequests();
  expect(rewrite!.messages.map((m) => m.role)).toEqual(['system', 'user']);
  expect(rewrite!.messages[1]!.content).toContain(`<conversation>\nuser: ${target}`);
  expect(rewrite!.messages[1]!.content).toContain('user: Tell me more about that.');
  // The rewritten question chose the passages (its words are in the quote), the prompt stayed the user's.
  const { sources, usage } = res.body.data;
  expect(sources[0]).toMatchObject({ page: 3, cited: true });
  expect(target).toContain(sources[0].quote.trim().split(' ')[0]);
  expect(answer!.messages.at(-1)!.content.endsWith('Question: Tell me more about that.')).toBe(true);
  const a = serverUsage(rewrite!.messages, target);
  const b = serverUsage(answer!.messages, 'Here is more [1].');
  expect(usage).toEqual({
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  });
});
