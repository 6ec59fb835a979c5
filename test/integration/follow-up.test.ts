import { type TestApp, useTestApp } from '#test/helpers/app.ts';
import { uploadFile } from '#test/helpers/files.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';

// Follow-up questions with the offline provider: the retrieval query joins the
// prompt to the previous user turn, so a follow-up that names nothing new still retrieves the
// pages the conversation is about. The same prompt in a new chat (no conversation) does not.
// Small chunks (CHUNK_TOKENS) give the document many passages to choose from.

let fileId: string;
const PAGES = 30;

const app = useTestApp(
  async () => ({
    pdfs: { '/book.pdf': { body: Buffer.from(await makeTextPdf(PAGES, 6)) } },
    env: { CHUNK_TOKENS: '120', CHUNK_OVERLAP_TOKENS: '0', RETRIEVAL_K: '4' },
    user: 'follow-up@example.com',
  }),
  { ready: ingestBook, timeout: 150_000 },
);

async function ingestBook(app: TestApp) {
  const { token } = app;
  fileId = await uploadFile(app, token, 'book.pdf');
  let data = (
    await app.request('POST', '/message/pdf', { token: app.token, body: { url: `${app.pdfs.url}/book.pdf`, fileId } })
  ).body.data.embeddingsData;
  // On a busy machine the ingestion may outlast the synchronous wait (202): follow it to the end.
  while (data.status === 'processing') {
    await new Promise((r) => setTimeout(r, 200));
    data = (await app.request('GET', `/message/pdf/${fileId}`, { token: app.token })).body.data.embeddingsData;
  }
  expect(data.status).toBe('completed');
  expect(data.chunks).toBeGreaterThan(20);
}

async function newChat(): Promise<string> {
  const chatId = (await app.request('POST', '/chat', { token: app.token, body: { name: 'book', type: 'file' } })).body
    .data.id;
  await app.request('POST', '/message/pdf', {
    token: app.token,
    body: { url: `${app.pdfs.url}/book.pdf`, fileId, chatId },
  });
  return chatId;
}
const ask = async (chatId: string, prompt: string) => {
  const res = await app.request('POST', '/message/logged-in', { token: app.token, body: { chatId, prompt } });
  expect(res.status).toBe(200);
  return res.body.data as { response: string; messageId: string; sources: { page: number; cited: boolean }[] };
};

test('a follow-up that names nothing new retrieves the pages the conversation is about', async () => {
  const page = 23;
  const chatId = await newChat();
  const first = await ask(chatId, `What does "${knownSentence(page, 2)}" mean?`);
  expect(first.sources[0]!.page).toBe(page);

  const followUp = 'Can you tell me more about that passage, please?';
  const answer = await ask(chatId, followUp);
  expect(answer.sources[0]!.page).toBe(page);
  // The offline reply quotes and cites it.
  expect(answer.response).toContain(`[1] book.pdf, page ${page}`);
  expect(answer.sources[0]!.cited).toBe(true);

  // Without the conversation, the same words find nothing of that page.
  const alone = await ask(await newChat(), followUp);
  expect(alone.sources.some((s) => s.page === page)).toBe(false);
});

test('a follow-up is read with the conversation of its own branch: an edit and a switch change what it retrieves', async () => {
  const chatId = await newChat();
  const first = await ask(chatId, `What does "${knownSentence(23, 2)}" mean?`);
  expect(first.sources[0]!.page).toBe(23);
  const [attachment] = (await app.request('GET', `/chat/${chatId}/messages`, { token: app.token })).body.data;
  expect(attachment.type).toBe('file');

  // Edit the first question into one about another page: a branch beside the first.
  const edited = await app.request('POST', '/message/logged-in', {
    token: app.token,
    body: { chatId, prompt: `What does "${knownSentence(5, 2)}" mean?`, parentId: attachment.id },
  });
  expect(edited.body.data.sources[0].page).toBe(5);
  const followUp = 'Can you tell me more about that passage, please?';
  expect((await ask(chatId, followUp)).sources[0]!.page).toBe(5);

  // Back on the first branch, the same words follow the first question.
  const switched = await app.request('PUT', `/chat/${chatId}`, {
    token: app.token,
    body: { activeLeafId: first.messageId },
  });
  expect(switched.status).toBe(200);
  expect((await ask(chatId, followUp)).sources[0]!.page).toBe(23);
});
