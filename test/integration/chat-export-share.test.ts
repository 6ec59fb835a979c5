import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import { appendMessage } from '#shared/chats/conversations/message-repository.ts';
import { mapLimit } from '#shared/dynamo.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';

// Export (GET /chat/{chatId}/export) and share (POST/DELETE /chat/{chatId}/share, the public
// GET /shared/{shareId}) of a file chat whose offline replies cite a real PDF's pages.

let app: TestApp;
let db: DynamoDBDocumentClient;
let alice: { token: string; user: any };
let bob: { token: string; user: any };
let fileId: string;

/** Per source IP: the tests before the last read fewer shares than this (the last one reads until refused). */
const SHARED_READS_PER_MINUTE = 30;

/** A chat name a file system, a header and a Markdown heading would each choke on. */
const HOSTILE_NAME = 'Zoë\'s "notes" \\ 100%\n# not a heading\r\n../../etc/passwd';
/** A prompt that would break a naive Markdown document: a heading, a fence left open, HTML. */
const HOSTILE_PROMPT = '# Heading?\n```\nunclosed fence\n<script>alert(1)</script>\n- item\n1. first';

beforeAll(async () => {
  app = await startTestApp({
    pdfs: { '/animals.pdf': { body: Buffer.from(await makeTextPdf(3, 8)) } },
    env: { RATE_LIMIT_SHARED_READS_PER_MINUTE: String(SHARED_READS_PER_MINUTE) },
  });
  db = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: app.endpoints.dynamodb, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS }),
  );
  [alice, bob] = await Promise.all([app.signIn('alice@example.com'), app.signIn('bob@example.com')]);
  const upload = await app.request('POST', '/upload', {
    token: alice.token,
    body: { fileName: 'animals.pdf', contentType: 'application/pdf', size: 5000 },
  });
  fileId = upload.body.data.fileId;
});
afterAll(async () => {
  db?.destroy();
  await app?.stop();
});

/** A file chat with the PDF attached, a prompt whose offline reply cites page 2, and a hostile prompt. */
async function citedFileChat(
  name = HOSTILE_NAME,
  { file = fileId, prompts = [knownSentence(2, 3), HOSTILE_PROMPT] } = {},
): Promise<string> {
  const chat = await app.request('POST', '/chat', { token: alice.token, body: { name, type: 'file' } });
  const chatId = chat.body.data.id;
  const ingested = await app.request('POST', '/message/pdf', {
    token: alice.token,
    body: { url: `${app.pdfs.url}/animals.pdf`, fileId: file, chatId },
  });
  expect(ingested.body.data.embeddingsData.status).toBe('completed');
  for (const prompt of prompts) {
    const res = await app.request('POST', '/message/logged-in', { token: alice.token, body: { chatId, prompt } });
    expect(res.status).toBe(200);
  }
  return chatId;
}

const messagesOf = async (chatId: string) =>
  (await app.request('GET', `/chat/${chatId}/messages?limit=100`, { token: alice.token })).body.data as any[];

describe('GET /chat/{chatId}/export', () => {
  let chatId: string;
  beforeAll(async () => {
    chatId = await citedFileChat();
  });

  test('markdown: an attachment named after the chat; the transcript with each reply’s cited file, page and quote; hostile text cannot break it', async () => {
    const res = await app.request('GET', `/chat/${chatId}/export`, { token: alice.token });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    // A browser on another origin may read the name (CORS exposes the header).
    expect(res.headers.get('access-control-expose-headers')).toContain('content-disposition');
    const disposition = res.headers.get('content-disposition')!;
    // The quoted fallback holds no quote, backslash or line break; filename* carries the name exactly.
    const [, fallback, encoded] = /^attachment; filename="([^"\\\r\n]*)"; filename\*=UTF-8''([A-Za-z0-9%._~!-]+)$/.exec(
      disposition,
    )!;
    expect(decodeURIComponent(encoded!)).toBe("Zoë's notes 100% # not a heading .. .. etc passwd.md");
    expect(fallback).toBe("Zo_'s notes 100_ # not a heading .. .. etc passwd.md");

    const lines = res.text.split('\n');
    // One heading of level 1 (the chat's name, on one line) and no fence: the hostile text is escaped.
    expect(lines.filter((l) => l.startsWith('# '))).toEqual([
      '# Zoë\'s "notes" \\\\ 100% \\# not a heading ../../etc/passwd',
    ]);
    expect(lines.filter((l) => l.startsWith('```'))).toEqual([]);
    expect(res.text).toContain(
      '\\# Heading?  \n\\`\\`\\`  \nunclosed fence  \n\\<script\\>alert(1)\\</script\\>  \n\\- item  \n1\\. first',
    );
    expect(lines.filter((l) => /^### (You|Assistant) · \d{4}-\d\d-\d\d \d\d:\d\d UTC$/.test(l))).toHaveLength(5);

    const stored = await messagesOf(chatId);
    const reply = stored.find((m) => m.messageType === 'ai' && m.sources?.some((s: any) => s.cited));
    const cited = reply.sources.map((s: any, i: number) => ({ ...s, n: i + 1 })).filter((s: any) => s.cited);
    expect(cited.length).toBeGreaterThan(0);
    for (const s of cited) {
      expect(res.text).toContain(`- \\[${s.n}\\] animals.pdf, page ${s.page}\n\n  > `);
      expect(res.text).toContain(s.quote.trim().split(/\s+/).slice(0, 4).join(' '));
    }
    expect(res.text).toContain('**Sources**');
  });

  test('json: the chat and its messages with sources and citations, without owner ids', async () => {
    const res = await app.request('GET', `/chat/${chatId}/export?format=json`, { token: alice.token });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/filename\*=UTF-8''Zo%C3%AB%27s%20notes.*\.json$/);
    const stored = await messagesOf(chatId);
    expect(res.body).toEqual({
      format: 'chat-export/1',
      exportedAt: expect.any(String),
      chat: expect.objectContaining({ id: chatId, name: HOSTILE_NAME, type: 'file', status: 'active' }),
      messages: stored.map(({ userId: _u, chatId: _c, siblingIds: _s, ...m }) => ({
        ...m,
        citations: (m.sources ?? []).flatMap((s: any, i: number) =>
          s.cited ? [{ n: i + 1, fileName: 'animals.pdf', page: s.page, quote: s.quote }] : [],
        ),
      })),
    });
    expect(res.body.messages.some((m: any) => m.citations.length > 0)).toBe(true);
    expect(res.text).not.toContain(alice.user.id);
  });

  test('another format is 400; a stranger’s chat and a missing one are 404', async () => {
    const bad = await app.request('GET', `/chat/${chatId}/export?format=pdf`, { token: alice.token });
    expect([bad.status, bad.body.errors[0].path]).toEqual([400, 'query.format']);
    expect((await app.request('GET', `/chat/${chatId}/export`, { token: bob.token })).status).toBe(404);
    expect((await app.request('GET', `/chat/${chatId}/export`)).status).toBe(401);
  });

  test('the export and the share hold the active branch only: an edit starts another, PUT activeLeafId switches back', async () => {
    const token = alice.token;
    const chatId = (await app.request('POST', '/chat', { token, body: { name: 'branches', type: 'text' } })).body.data
      .id;
    const send = async (prompt: string, parentId?: null) =>
      (
        await app.request('POST', '/message/logged-in', {
          token,
          body: { chatId, prompt, ...(parentId === null && { parentId }) },
        })
      ).body.data.messageId as string;
    const first = await send('first branch prompt');
    await send('second branch prompt', null); // an edit of the first prompt: a sibling, now active
    const prompts = async () => {
      const res = await app.request('GET', `/chat/${chatId}/export?format=json`, { token });
      return res.body.messages.filter((m: any) => m.messageType === 'user').map((m: any) => m.message);
    };
    expect(await prompts()).toEqual(['second branch prompt']);
    const shared = (await app.request('POST', `/chat/${chatId}/share`, { token })).body.data;
    const read = async (url: string) => ((await (await fetch(url)).json()) as { data: { messages: any[] } }).data;
    expect((await read(shared.url)).messages.map((m) => m.text)[0]).toBe('second branch prompt');

    expect((await app.request('PUT', `/chat/${chatId}`, { token, body: { activeLeafId: first } })).status).toBe(200);
    expect(await prompts()).toEqual(['first branch prompt']);
    // The share is a snapshot: switching branches does not change it; sharing again does.
    expect((await read(shared.url)).messages[0].text).toBe('second branch prompt');
    const again = (await app.request('POST', `/chat/${chatId}/share`, { token })).body.data;
    expect((await read(again.url)).messages[0].text).toBe('first branch prompt');
  });

  test('a chat of 300 messages and 7 MB exports whole, streamed past the 6 MB of a buffered response', async () => {
    const big = (await app.request('POST', '/chat', { token: alice.token, body: { name: 'long', type: 'text' } })).body
      .data.id;
    const line = 'x'.repeat(24_000);
    await mapLimit(
      Array.from({ length: 300 }, (_, i) => i),
      8,
      (i) =>
        appendMessage(db, app.tableName, {
          chatId: big,
          userId: alice.user.id,
          message: `${i} ${line}`,
          messageType: i % 2 ? 'ai' : 'user',
          type: 'message',
          timestamp: new Date().toISOString(),
        }),
    );
    const res = await app.request('GET', `/chat/${big}/export?format=json`, { token: alice.token });
    expect(res.status).toBe(200);
    expect(res.text.length).toBeGreaterThan(6 * 1024 * 1024); // beyond a buffered Lambda response
    expect(res.body.messages).toHaveLength(300);
    // Too long to share (SHARE_MAX_BYTES, 2 MB): refused, with the way out.
    const share = await app.request('POST', `/chat/${big}/share`, { token: alice.token });
    expect([share.status, share.body.message]).toEqual([409, expect.stringContaining('export it instead')]);
  }, 120_000);

  test('a share of 1.2 MB is stored in parts under the item limit and read back whole', async () => {
    const chatId = (await app.request('POST', '/chat', { token: alice.token, body: { type: 'text' } })).body.data.id;
    for (let i = 0; i < 100; i++) {
      await appendMessage(db, app.tableName, {
        chatId,
        userId: alice.user.id,
        message: `${i} ${'y'.repeat(12_000)}`,
        messageType: 'user',
        type: 'message',
        timestamp: new Date().toISOString(),
      });
    }
    const { url } = (await app.request('POST', `/chat/${chatId}/share`, { token: alice.token })).body.data;
    const read = await fetch(url);
    expect(read.status).toBe(200);
    const { messages } = ((await read.json()) as { data: { messages: { text: string }[] } }).data;
    expect(messages.map((m) => m.text.split(' ')[0])).toEqual(Array.from({ length: 100 }, (_, i) => String(i)));
  }, 60_000);
});

describe('sharing', () => {
  const share = (chatId: string, token = alice.token) => app.request('POST', `/chat/${chatId}/share`, { token });
  /** GET of a share's URL with no Authorization at all. */
  const readShared = (url: string) =>
    fetch(url).then(async (r) => ({ status: r.status, headers: r.headers, text: await r.text() }));

  test('a snapshot anyone reads without signing in: names, texts, times and citations, and no ids, emails or URLs; later messages do not change it', async () => {
    const chatId = await citedFileChat('Shared notes');
    const res = await share(chatId);
    expect(res.status).toBe(201);
    const { shareId, url } = res.body.data;
    expect(shareId).toMatch(/^[A-Za-z0-9_-]{22}$/); // 128 random bits
    expect(url).toBe(`${app.url}/shared/${shareId}`);

    const read = await readShared(url);
    expect(read.status).toBe(200);
    const shared = JSON.parse(read.text).data;
    const stored = (await messagesOf(chatId)).filter((m) => m.type !== 'file');
    expect(shared).toEqual({
      shareId,
      chatName: 'Shared notes',
      sharedAt: expect.any(String),
      messages: stored.map((m) => ({
        role: m.messageType === 'ai' ? 'assistant' : 'user',
        text: m.message,
        timestamp: m.timestamp,
        ...(m.sources?.some((s: any) => s.cited) && {
          citations: m.sources.flatMap((s: any, i: number) =>
            s.cited ? [{ n: i + 1, fileName: 'animals.pdf', page: s.page, quote: s.quote }] : [],
          ),
        }),
      })),
    });
    expect(shared.messages.some((m: any) => m.citations?.length)).toBe(true);
    // Nothing that identifies the owner, the chat's storage or the file.
    for (const secret of [
      alice.user.id,
      'alice@example.com',
      chatId,
      fileId,
      app.pdfs.url,
      'userId',
      'fileId',
      'system',
    ])
      expect(read.text).not.toContain(secret);

    // A public route reads no Authorization header: a bad one changes nothing.
    const withGarbage = await fetch(url, { headers: { authorization: 'Bearer not.a.token' } });
    expect([withGarbage.status, ((await withGarbage.json()) as { data: unknown }).data]).toEqual([200, shared]);

    // A later message is not in the snapshot.
    await app.request('POST', '/message/logged-in', { token: alice.token, body: { chatId, prompt: 'one more' } });
    expect(JSON.parse((await readShared(url)).text).data).toEqual(shared);
  });

  test('sharing again replaces the snapshot under a new id; revoking ends it (404), as does deleting the chat', async () => {
    const chatId = await citedFileChat('To revoke');
    const first = (await share(chatId)).body.data;
    const second = (await share(chatId)).body.data;
    expect(second.shareId).not.toBe(first.shareId);
    expect((await readShared(first.url)).status).toBe(404);
    expect((await readShared(second.url)).status).toBe(200);

    const revoked = await app.request('DELETE', `/chat/${chatId}/share`, { token: alice.token });
    expect([revoked.status, revoked.body.data]).toEqual([200, { shareId: second.shareId, revoked: true }]);
    expect((await readShared(second.url)).status).toBe(404);
    expect((await app.request('DELETE', `/chat/${chatId}/share`, { token: alice.token })).status).toBe(404);

    const third = (await share(chatId)).body.data;
    expect((await readShared(third.url)).status).toBe(200);
    expect((await app.request('DELETE', `/chat/${chatId}`, { token: alice.token })).status).toBe(200);
    const gone = await readShared(third.url);
    expect([gone.status, JSON.parse(gone.text).message]).toEqual([404, 'Shared chat not found']);
  });

  test('a file deleted after the share: its citations show only their marker and that the source was deleted, without its name or quotes', async () => {
    const upload = await app.request('POST', '/upload', {
      token: alice.token,
      body: { fileName: 'secret-plans.pdf', contentType: 'application/pdf', size: 5000 },
    });
    const secretId = upload.body.data.fileId as string;
    // Part of a sentence of page 2: the reply quotes the whole sentence, which the prompt does not hold.
    const prompt = knownSentence(2, 3).split(' ').slice(0, 6).join(' ');
    const chatId = await citedFileChat('Cites a deleted file', { file: secretId, prompts: [prompt] });
    const { url } = (await share(chatId)).body.data;
    const before = JSON.parse((await readShared(url)).text).data;
    const cited = before.messages.flatMap((m: any) => m.citations ?? []);
    expect(cited.length).toBeGreaterThan(0);
    expect(cited.every((c: any) => c.fileName === 'secret-plans.pdf' && c.quote.length > 20)).toBe(true);
    const quotes: string[] = cited.map((c: any) => c.quote);

    expect((await app.request('DELETE', `/upload/${secretId}`, { token: alice.token })).status).toBe(200);

    const after = await readShared(url);
    expect(after.status).toBe(200);
    const shared = JSON.parse(after.text).data;
    const reply = shared.messages.find((m: any) => m.role === 'assistant');
    expect(reply.citations).toEqual(cited.map((c: any) => ({ n: c.n, deleted: true })));
    expect(after.text).not.toContain('secret-plans');
    for (const quote of quotes) expect(after.text).not.toContain(quote);
    // The rest of the snapshot is as it was: the prompt, and the reply's marker.
    expect(shared.messages[0]).toEqual(before.messages[0]);
    expect(reply.text).toContain(`[${cited[0].n}]`);

    // Shared again after the delete: the new snapshot holds neither.
    const again = (await share(chatId)).body.data;
    const reshared = await readShared(again.url);
    expect(JSON.parse(reshared.text).data.messages).toEqual(shared.messages);
    expect(reshared.text).not.toContain('secret-plans');
  });

  test('a stranger can neither share nor revoke (404); unknown and malformed ids are 404', async () => {
    const chatId = (await app.request('POST', '/chat', { token: alice.token, body: { type: 'text' } })).body.data.id;
    const { url } = (await share(chatId)).body.data;
    expect((await share(chatId, bob.token)).status).toBe(404);
    expect((await app.request('DELETE', `/chat/${chatId}/share`, { token: bob.token })).status).toBe(404);
    expect((await readShared(url)).status).toBe(200); // the stranger's attempts changed nothing
    expect((await app.request('POST', `/chat/${chatId}/share`)).status).toBe(401);
    for (const id of ['A'.repeat(22), 'short', 'x'.repeat(500), '%00', '..%2F..%2Fchat'])
      expect([id, (await readShared(`${app.url}/shared/${id}`)).status]).toEqual([id, 404]);
  });
});

describe('the public read is limited per source IP (the last tests: they spend the allowance)', () => {
  test('beyond RATE_LIMIT_SHARED_READS_PER_MINUTE: 429 with Retry-After, whatever the id', async () => {
    const chatId = (await app.request('POST', '/chat', { token: alice.token, body: { type: 'text' } })).body.data.id;
    const { url } = (await app.request('POST', `/chat/${chatId}/share`, { token: alice.token })).body.data;
    // A minute's window may turn between two reads: within two windows' allowance one is refused all the same.
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i <= 2 * SHARED_READS_PER_MINUTE && !refused; i++) {
      const res = await fetch(i % 2 ? url : `${app.url}/shared/${'B'.repeat(22)}`);
      statuses.push(res.status);
      if (res.status === 429) refused = res;
      else await res.body?.cancel();
    }
    expect(refused).toBeDefined();
    expect(statuses.slice(0, -1).every((s) => s === 200 || s === 404)).toBe(true);
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused!.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(((await refused!.json()) as { statusCode: number }).statusCode).toBe(429);
  });
});
