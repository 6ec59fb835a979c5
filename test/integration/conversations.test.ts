import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createId } from '#shared/ids.ts';
import { eventually, kinds, useReplyTestApp } from '#test/helpers/chat-calls.ts';
import { lastUserMessage } from '#test/helpers/openai-server.ts';
import { readSse } from '#test/helpers/sse.ts';

// Conversations as trees, through the local gateway against the loopback OpenAI server: an edit
// starts a branch, a regenerated reply (whole or streamed) is a sibling, the model sees only the
// branch it answers, any branch can be read and made active, a chat stored before the tree reads
// as one branch, and a chat created without a name is titled from its first exchange.

let strangerToken: string;
const { app, newChat, stream } = useReplyTestApp('branches@example.com', {
  OPENAI_MAX_RETRIES: '0',
  DAILY_TOKEN_BUDGET: '10000000',
});
beforeAll(async () => {
  ({ token: strangerToken } = await app.signIn('stranger-branches@example.com'));
});
beforeEach(() => {
  app.ai.chunkDelayMs = 0;
  app.ai.setReply((req) => (isTitleRequest(req) ? 'Animals And Their Habits' : `You said: ${lastUserMessage(req)}`));
});

const isTitleRequest = (req: { messages: { role: string; content: string }[] }) =>
  req.messages[0]?.content.startsWith('You name conversations') ?? false;
/** The dialogue a reply request sent (system message and title requests left out). */
const dialogues = () =>
  app.ai
    .chatRequests()
    .filter((r) => !isTitleRequest(r))
    .map((r) => r.messages.filter((m) => m.role !== 'system').map((m) => `${m.role}: ${m.content}`));

const send = async (chatId: string, prompt: string, extra: object = {}) => {
  const res = await app.request('POST', '/message/logged-in', { token: app.token, body: { chatId, prompt, ...extra } });
  expect(res.status).toBe(200);
  return res.body.data as { messageId: string; userMessageId: string; response: string; chatName?: string };
};
const regenerate = (chatId: string, messageId: string, body: object = {}, as = app.token) =>
  app.request('POST', `/chat/${chatId}/messages/${messageId}/regenerate`, { token: as, body });
const branch = async (chatId: string, leaf?: string) => {
  const res = await app.request('GET', `/chat/${chatId}/messages${leaf ? `?leaf=${leaf}` : ''}`, { token: app.token });
  expect(res.status).toBe(200);
  return res.body.data as any[];
};
const texts = (messages: any[]) => messages.map((m) => m.message);
/** The tokens counted against the user's budget today. */
const tokensToday = async () => {
  const out = await dynamo().send(
    new GetCommand({
      TableName: app.tableName,
      Key: { PK: `LIMIT#${app.user.id}`, SK: `TOKENS#${new Date().toISOString().slice(0, 10)}` },
      ConsistentRead: true,
    }),
  );
  return Number(out.Item?.used ?? 0);
};
const dynamo = () => app.clients().db;

test('an edit starts a branch the model sees alone; both versions stay, and either branch can be read and made active', async () => {
  const chat = await newChat();
  const first = await send(chat.id, 'one');
  const second = await send(chat.id, 'two');
  // Edit "two": a prompt under its parent (the first reply).
  const edited = await send(chat.id, 'two, edited', { parentId: first.messageId });
  expect(dialogues().at(-1)).toEqual(['user: one', 'assistant: You said: one', 'user: two, edited']);

  const active = await branch(chat.id);
  expect(texts(active)).toEqual(['one', 'You said: one', 'two, edited', 'You said: two, edited']);
  expect(active.map((m) => m.parentId)).toEqual([null, active[0].id, active[1].id, active[2].id]);
  expect(active[2].siblingIds).toEqual([second.userMessageId, edited.userMessageId]);
  expect(active[0].siblingIds).toEqual([active[0].id]);
  // Sequence numbers stay unique and increasing in creation order, across branches.
  expect(active.map((m) => m.sequenceNumber)).toEqual([1, 2, 5, 6]);

  // The first version, by any of its messages: the branch runs on to the newest message under it.
  expect(texts(await branch(chat.id, second.userMessageId))).toEqual(['one', 'You said: one', 'two', 'You said: two']);
  const switched = await app.request('PUT', `/chat/${chat.id}`, {
    token: app.token,
    body: { activeLeafId: second.userMessageId },
  });
  expect(switched.status).toBe(200);
  expect(switched.body.data.activeLeafId).toBe(second.messageId);
  expect(texts(await branch(chat.id))).toEqual(['one', 'You said: one', 'two', 'You said: two']);
  // The next prompt without a parent follows the active branch.
  await send(chat.id, 'three');
  expect(dialogues().at(-1)).toEqual([
    'user: one',
    'assistant: You said: one',
    'user: two',
    'assistant: You said: two',
    'user: three',
  ]);
  // parentId null starts again at the root.
  const fresh = await send(chat.id, 'from the top', { parentId: null });
  expect(dialogues().at(-1)).toEqual(['user: from the top']);
  const root = await branch(chat.id);
  expect(texts(root)).toEqual(['from the top', 'You said: from the top']);
  expect(root[0]).toMatchObject({ id: fresh.userMessageId, parentId: null });
  expect(root[0].siblingIds).toEqual([first.userMessageId, fresh.userMessageId]);
});

test('a regenerated reply, whole or streamed, is a sibling answering the same prompt with its own branch', async () => {
  const chat = await newChat();
  await send(chat.id, 'alpha');
  const beta = await send(chat.id, 'beta');

  const whole = await regenerate(chat.id, beta.messageId);
  expect(whole.status).toBe(200);
  expect(whole.body.data).toMatchObject({ userMessageId: beta.userMessageId, response: 'You said: beta' });
  expect(dialogues().at(-1)).toEqual(['user: alpha', 'assistant: You said: alpha', 'user: beta']);

  app.ai.setReply('a streamed alternative');
  const response = await fetch(`${app.url}/chat/${chat.id}/messages/${beta.messageId}/regenerate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ stream: true }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const sse = await readSse(response);
  expect(kinds(sse)).toEqual(['event:start', ...Array(3).fill('delta'), 'event:usage', '[DONE]']);
  const start = JSON.parse(sse.events[0]!.data);
  expect(start.userMessageId).toBe(beta.userMessageId);
  expect(dialogues().at(-1)).toEqual(['user: alpha', 'assistant: You said: alpha', 'user: beta']);

  const active = await eventually(
    () => branch(chat.id),
    (b) => b.at(-1)?.status === 'complete',
  );
  expect(texts(active)).toEqual(['alpha', 'You said: alpha', 'beta', 'a streamed alternative']);
  expect(active[3]).toMatchObject({ id: start.messageId, parentId: beta.userMessageId });
  expect(active[3].siblingIds).toEqual([beta.messageId, whole.body.data.messageId, start.messageId]);
  // The regenerated messages stay: each is its own branch.
  expect(texts(await branch(chat.id, beta.messageId)).at(-1)).toBe('You said: beta');
});

test('refusals: a prompt as parent, messages not in the chat, regenerating a prompt, strangers', async () => {
  const chat = await newChat();
  const other = await newChat();
  const a = await send(chat.id, 'question');
  const elsewhere = await send(other.id, 'elsewhere');
  const post = (body: object) =>
    app.request('POST', '/message/logged-in', { token: app.token, body: { chatId: chat.id, ...body } });

  const underPrompt = await post({ prompt: 'x', parentId: a.userMessageId });
  expect(underPrompt.status).toBe(400);
  expect(underPrompt.body.message).toMatch(/parentId must be an ai message/);
  for (const parentId of [elsewhere.messageId, createId()]) {
    const res = await post({ prompt: 'x', parentId });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ path: 'body.parentId', message: 'Not a message of this chat' }]);
  }
  expect((await post({ prompt: 'x', parentId: 'not an id' })).status).toBe(400);

  const onPrompt = await regenerate(chat.id, a.userMessageId);
  expect(onPrompt.status).toBe(400);
  expect(onPrompt.body.message).toMatch(/Only an ai reply/);
  expect((await regenerate(chat.id, elsewhere.messageId)).status).toBe(404);
  expect((await regenerate(chat.id, a.messageId, {}, strangerToken)).status).toBe(404);
  expect((await regenerate(chat.id, a.messageId, { stream: 'yes' })).status).toBe(400);

  const put = await app.request('PUT', `/chat/${chat.id}`, {
    token: app.token,
    body: { activeLeafId: elsewhere.messageId },
  });
  expect(put.status).toBe(400);
  expect(put.body.errors).toEqual([{ path: 'body.activeLeafId', message: 'Not a message of this chat' }]);
  const strangerPut = await app.request('PUT', `/chat/${chat.id}`, {
    token: strangerToken,
    body: { activeLeafId: a.messageId },
  });
  expect(strangerPut.status).toBe(404);
  const leaf = await app.request('GET', `/chat/${chat.id}/messages?leaf=${elsewhere.messageId}`, { token: app.token });
  expect(leaf.status).toBe(400);
  // Nothing was stored by the refusals: the chat still holds its one exchange.
  expect(texts(await branch(chat.id))).toEqual(['question', 'You said: question']);
  expect((await branch(chat.id))[0].siblingIds).toHaveLength(1);
});

test('a stranger naming a message of the chat (send with parentId, regenerate) gets the 404 of a missing chat', async () => {
  const chat = await newChat();
  const a = await send(chat.id, 'mine');
  const missing = createId();
  const asStranger = (body: object) => app.request('POST', '/message/logged-in', { token: strangerToken, body });
  const pairs = [
    [
      await asStranger({ chatId: chat.id, prompt: 'x', parentId: a.messageId }),
      await asStranger({ chatId: missing, prompt: 'x', parentId: a.messageId }),
    ],
    [
      await regenerate(chat.id, a.messageId, {}, strangerToken),
      await regenerate(missing, a.messageId, {}, strangerToken),
    ],
    [
      await regenerate(chat.id, a.messageId, { stream: true }, strangerToken),
      await regenerate(missing, a.messageId, { stream: true }, strangerToken),
    ],
  ];
  for (const [stranger, ghost] of pairs) {
    expect(stranger!.status).toBe(404);
    expect(stranger!.body).toEqual(ghost!.body);
  }
  expect(texts(await branch(chat.id))).toEqual(['mine', 'You said: mine']);
});

test('a whole reply is stored and answered with status complete, as a streamed one is', async () => {
  const chat = await newChat();
  const whole = await send(chat.id, 'whole');
  expect(whole).toMatchObject({ status: 'complete' });
  await stream(chat.id, 'streamed');
  const stored = await eventually(
    () => branch(chat.id),
    (b) => b[3]?.status === 'complete',
  );
  expect(stored[1]).toMatchObject({ id: whole.messageId, status: 'complete' });
  // The same fields either way (the streamed reply's replay state stays in the table).
  expect(Object.keys(stored[1]).sort()).toEqual(Object.keys(stored[3]).sort());
  const regenerated = await regenerate(chat.id, whole.messageId);
  expect(regenerated.body.data.status).toBe('complete');
  expect((await branch(chat.id)).at(-1)).toMatchObject({ id: regenerated.body.data.messageId, status: 'complete' });
});

test('a chat stored before the tree reads as one branch; a new prompt follows its last message, its replies regenerate', async () => {
  const chat = await newChat();
  const db = dynamo();
  const legacy = ['old question', 'old answer', 'second question', 'second answer'].map((message, i) => ({
    PK: `CHAT#${chat.id}`,
    SK: `MSG#${String(i + 1).padStart(10, '0')}`,
    id: createId(),
    chatId: chat.id,
    userId: chat.userId,
    message,
    messageType: i % 2 ? 'ai' : 'user',
    type: 'message',
    sequenceNumber: i + 1,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
  }));
  for (const item of legacy) await db.send(new PutCommand({ TableName: app.tableName, Item: item }));
  await db.send(
    new UpdateCommand({
      TableName: app.tableName,
      Key: { PK: `CHAT#${chat.id}`, SK: 'META' },
      UpdateExpression: 'SET messageCount = :four',
      ExpressionAttributeValues: { ':four': 4 },
    }),
  );

  const before = await branch(chat.id);
  expect(texts(before)).toEqual(legacy.map((m) => m.message));
  expect(before.map((m) => m.parentId)).toEqual([null, ...legacy.slice(0, 3).map((m) => m.id)]);

  const next = await send(chat.id, 'new question');
  expect(dialogues().at(-1)).toEqual([
    'user: old question',
    'assistant: old answer',
    'user: second question',
    'assistant: second answer',
    'user: new question',
  ]);
  const again = await regenerate(chat.id, legacy[3]!.id);
  expect(again.status).toBe(200);
  expect(again.body.data.userMessageId).toBe(legacy[2]!.id);
  const active = await branch(chat.id);
  expect(texts(active)).toEqual(['old question', 'old answer', 'second question', 'You said: second question']);
  expect(active[3].siblingIds).toEqual([legacy[3]!.id, again.body.data.messageId]);
  expect(texts(await branch(chat.id, next.userMessageId)).slice(-2)).toEqual([
    'new question',
    'You said: new question',
  ]);
});

test('a chat created without a name is titled from its first exchange (whole or streamed); a name the user set stays', async () => {
  const untitled = await newChat({ type: 'text', name: undefined });
  expect(untitled.chatName).toBe('New Chat');
  const before = await tokensToday();
  const first = await send(untitled.id, 'Tell me about animals and their habits');
  expect(first.chatName).toBe('Animals And Their Habits');
  // The title's tokens are counted in the user's daily budget, beside the reply's.
  expect((await tokensToday()) - before).toBeGreaterThan((first as any).usage.totalTokens);
  const titleRequests = app.ai.chatRequests().filter(isTitleRequest);
  expect(titleRequests).toHaveLength(1);
  expect(JSON.stringify(titleRequests[0]!.messages)).toContain('Tell me about animals');
  const read = await app.request('GET', `/chat/${untitled.id}`, { token: app.token });
  expect(read.body.data.chatName).toBe('Animals And Their Habits');
  // Only the first exchange.
  await send(untitled.id, 'and more');
  expect(app.ai.chatRequests().filter(isTitleRequest)).toHaveLength(1);

  const streamed = await newChat({ type: 'text', name: undefined });
  const sse = await stream(streamed.id, 'What do owls eat?');
  expect(kinds(sse).slice(-3)).toEqual(['event:usage', 'event:title', '[DONE]']);
  const titleEvent = sse.events.find((e) => e.event === 'title')!;
  expect(JSON.parse(titleEvent.data)).toEqual({ chatName: 'Animals And Their Habits' });
  // A replay sends the same event under the same id.
  const start = JSON.parse(sse.events[0]!.data);
  const replay = await readSse(
    await fetch(`${app.url}/chat/${streamed.id}/messages/${start.messageId}/stream`, {
      headers: { authorization: `Bearer ${app.token}`, 'last-event-id': String(Number(titleEvent.id) - 1) },
    }),
  );
  expect(replay.events.map((e) => [e.id, e.event])).toEqual([
    [titleEvent.id, 'title'],
    [undefined, undefined],
  ]);

  // Named before its first exchange: never retitled.
  const renamed = await newChat({ type: 'text', name: undefined });
  await app.request('PUT', `/chat/${renamed.id}`, { token: app.token, body: { name: 'My own name' } });
  const beforeKept = await tokensToday();
  const kept = await send(renamed.id, 'Tell me about animals');
  expect(kept.chatName).toBeUndefined();
  expect((await tokensToday()) - beforeKept).toBe((kept as any).usage.totalTokens);
  expect((await app.request('GET', `/chat/${renamed.id}`, { token: app.token })).body.data.chatName).toBe(
    'My own name',
  );
  expect(app.ai.chatRequests().filter(isTitleRequest)).toHaveLength(2);
});
