import { createId } from '#shared/ids.ts';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '#shared/clients.ts';
import { systemClock } from '#shared/clock.ts';
import { appendMessage } from '#shared/chats/conversations/message-repository.ts';
import { chatRepositories } from '#shared/chats/repositories.ts';
import { FeedbackRepository } from '#shared/chats/conversations/feedback-repository.ts';
import { removeFeedback, setFeedback } from '#shared/chats/conversations/feedback-service.ts';
import { messageKey } from '#shared/chats/keys.ts';
import { METRIC, serviceMetrics } from '#shared/observability/metrics.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { chatCalls, eventually } from '#test/helpers/chat-calls.ts';
import { emitted } from '#test/helpers/emf.ts';

// Feedback on ai replies through the local gateway (the offline provider answers): set, replaced,
// shown wherever the message is, removed; refused on prompts and attachments (400) and for
// strangers and unknown ids (404); strict bodies. Then what the routes cannot show: the rating
// changes counted in the metrics, a write racing a chat delete, a rating given mid-stream.

let app: TestApp;
let token: string;
let userId: string;
let strangerToken: string;
let db: DynamoDBDocumentClient;

beforeAll(async () => {
  app = await startTestApp({ pollers: false });
  ({
    token,
    user: { id: userId },
  } = await app.signIn('feedback@example.com'));
  ({ token: strangerToken } = await app.signIn('stranger-feedback@example.com'));
  db = createDocumentClient({ AWS_REGION: app.config.AWS_REGION, DYNAMODB_ENDPOINT: app.endpoints.dynamodb });
});
afterAll(async () => {
  await app?.stop();
});

const { newChat, stream, history } = chatCalls(() => ({ app, token }));
const feedbackPath = (chatId: string, messageId: string) => `/chat/${chatId}/messages/${messageId}/feedback`;
const put = (chatId: string, messageId: string, body: unknown, as = token) =>
  app.request('PUT', feedbackPath(chatId, messageId), { token: as, body });
const remove = (chatId: string, messageId: string, as = token) =>
  app.request('DELETE', feedbackPath(chatId, messageId), { token: as });

/** A text chat with one exchange: the prompt's and the reply's ids. */
async function exchange() {
  const chat = await newChat();
  const sent = await app.request('POST', '/message/logged-in', { token, body: { chatId: chat.id, prompt: 'Hello' } });
  expect(sent.status).toBe(200);
  return { chatId: chat.id as string, promptId: sent.body.data.userMessageId, replyId: sent.body.data.messageId };
}

const UNKNOWN_ID = `m${'0'.repeat(21)}zz`;
/** A listed message as the message routes answer it: siblingIds belong to the list (they need the tree). */
const asStored = ({ siblingIds: _, ...m }: Record<string, unknown>) => m;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

test('up, then down with a comment (replacing it), shown in the message list, then removed; removing none is fine', async () => {
  const { chatId, replyId } = await exchange();
  const [, listed] = await history(chatId);
  expect(listed).not.toHaveProperty('feedback');
  const before = asStored(listed);

  const up = await put(chatId, replyId, { rating: 'up' });
  expect(up.status).toBe(200);
  expect(up.body).toEqual({
    success: true,
    statusCode: 200,
    message: 'Feedback saved',
    data: { ...before, feedback: { rating: 'up', updatedAt: expect.stringMatching(ISO) } },
  });
  expect((await history(chatId))[1]).toEqual({ ...up.body.data, siblingIds: listed.siblingIds });

  const down = await put(chatId, replyId, { rating: 'down', comment: '  The greeting was not answered.\n' });
  expect(down.status).toBe(200);
  expect(down.body.data).toEqual({
    ...before,
    feedback: { rating: 'down', comment: 'The greeting was not answered.', updatedAt: expect.stringMatching(ISO) },
  });
  expect(down.body.data.feedback.updatedAt >= up.body.data.feedback.updatedAt).toBe(true);
  expect(await history(chatId)).toEqual([
    expect.not.objectContaining({ feedback: expect.anything() }),
    { ...down.body.data, siblingIds: listed.siblingIds },
  ]);

  // A blank comment is no comment; the rating given again with it drops the earlier comment.
  const blank = await put(chatId, replyId, { rating: 'down', comment: '   ' });
  expect(blank.body.data.feedback).toEqual({ rating: 'down', updatedAt: expect.stringMatching(ISO) });

  const removed = await remove(chatId, replyId);
  expect(removed.status).toBe(200);
  expect(removed.body).toEqual({ success: true, statusCode: 200, message: 'Feedback removed', data: before });
  expect((await history(chatId))[1]).toEqual(listed);

  const again = await remove(chatId, replyId);
  expect([again.status, again.body.data]).toEqual([200, before]);
});

test('a user message or a file attachment is a 400 saying only ai replies take feedback', async () => {
  const { chatId, promptId } = await exchange();
  // An attachment as the PDF ingestion writes it (shared/ingestion/ingest-service.ts).
  const attachment = await appendMessage(db, app.tableName, {
    chatId,
    userId,
    message: 'Attached file: paper.pdf (f5h8j2k6m3n9p4q7r1s0t8uv)',
    messageType: 'user',
    type: 'file',
    timestamp: new Date().toISOString(),
  });
  const cases = [
    [promptId, 'Only ai replies take feedback; this is a user message'],
    [attachment.id, 'Only ai replies take feedback; this is a file attachment'],
  ];
  for (const [messageId, message] of cases) {
    for (const res of [await put(chatId, messageId!, { rating: 'up' }), await remove(chatId, messageId!)]) {
      expect([messageId, res.status, res.body]).toEqual([
        messageId,
        400,
        {
          success: false,
          statusCode: 400,
          message,
          errors: [{ path: 'params.messageId', message: 'Not an ai reply', code: 'NOT_AN_AI_REPLY' }],
        },
      ]);
    }
  }
  expect((await history(chatId)).some((m) => m.feedback)).toBe(false);
});

test('bad bodies are 400 naming the field: a rating that is not up or down, a comment too long, an extra field', async () => {
  const { chatId, replyId } = await exchange();
  const cases: [unknown, string][] = [
    [{ rating: 'meh' }, 'body.rating'],
    [{}, 'body.rating'],
    [{ rating: 'up', comment: 'x'.repeat(2_001) }, 'body.comment'],
    [{ rating: 'up', comment: 42 }, 'body.comment'],
    [{ rating: 'up', score: 5 }, 'body'],
    [[{ rating: 'up' }], 'body'],
  ];
  for (const [body, path] of cases) {
    const res = await put(chatId, replyId, body);
    expect([body, res.status, res.body.success, res.body.message]).toEqual([
      body,
      400,
      false,
      'Request validation failed',
    ]);
    expect([body, res.body.errors.map((e: { path: string }) => e.path)]).toEqual([body, [path]]);
  }
  // 2,000 characters is the most, counted after trimming.
  const longest = await put(chatId, replyId, { rating: 'up', comment: ` ${'x'.repeat(2_000)} ` });
  expect([longest.status, longest.body.data.feedback.comment.length]).toEqual([200, 2_000]);
});

test("a stranger's chat and an unknown message are 404, and the reply is left as it was", async () => {
  const { chatId, replyId } = await exchange();
  await put(chatId, replyId, { rating: 'up' });
  const rated = (await history(chatId))[1];
  const other = await exchange();
  const attempts = [
    await put(chatId, replyId, { rating: 'down' }, strangerToken),
    await remove(chatId, replyId, strangerToken),
    await put(chatId, UNKNOWN_ID, { rating: 'down' }),
    await remove(chatId, UNKNOWN_ID),
    // A reply of another chat of the same owner is not in this chat.
    await put(chatId, other.replyId, { rating: 'down' }),
  ];
  expect(attempts.map((r) => [r.status, r.body.success])).toEqual(Array(5).fill([404, false]));
  expect(attempts[0]!.body.message).toBe('Chat not found');
  expect(attempts[2]!.body.message).toBe('No message with this id in this chat');
  expect((await history(chatId))[1]).toEqual(rated);
  expect((await history(other.chatId))[1]).not.toHaveProperty('feedback');
});

test('a streamed reply (offline provider) is rated once it has ended, and still replays', async () => {
  const chat = await newChat();
  const sse = await stream(chat.id, 'Hello there');
  expect(sse.last()).toBe('[DONE]');
  const { messageId } = JSON.parse(sse.events.find((e) => e.event === 'start')!.data);
  const stored = await eventually(
    () => history(chat.id),
    (m) => m[1]?.status === 'complete',
  );

  const res = await put(chat.id, messageId, { rating: 'up', comment: 'Clear about the missing model.' });
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual({
    ...asStored(stored[1]),
    feedback: { rating: 'up', comment: 'Clear about the missing model.', updatedAt: expect.stringMatching(ISO) },
  });
  const replay = await fetch(`${app.url}/chat/${chat.id}/messages/${messageId}/stream`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect([replay.status, (await replay.text()).trimEnd().endsWith('data: [DONE]')]).toEqual([200, true]);
});

describe('below the routes', () => {
  const deps = (metricsNamespace?: string) => ({
    ...chatRepositories(db, app.tableName),
    feedback: new FeedbackRepository(db, app.tableName),
    clock: systemClock,
    metrics: serviceMetrics(metricsNamespace),
  });

  const feedbackCounts = (line: Record<string, unknown>) =>
    Object.fromEntries(
      [METRIC.feedbackUp, METRIC.feedbackDown, METRIC.feedbackRemoved]
        .filter((n) => n in line)
        .map((n) => [n, line[n]]),
    );

  test('each change of rating is counted under the new rating (or removed); no change, no count', async () => {
    const { chatId, replyId } = await exchange();
    const d = deps('FeedbackTest');
    const of = { userId, chatId, messageId: replyId };
    const steps: [string, () => Promise<unknown>][] = [
      ['up', () => setFeedback(d, { ...of, rating: 'up' })],
      ['up again, a comment added', () => setFeedback(d, { ...of, rating: 'up', comment: 'Thanks' })],
      ['down', () => setFeedback(d, { ...of, rating: 'down' })],
      ['removed', () => removeFeedback(d, of)],
      ['removed again', () => removeFeedback(d, of)],
      ['down from none', () => setFeedback(d, { ...of, rating: 'down' })],
    ];
    const counted: [string, Record<string, unknown>[]][] = [];
    for (const [what, run] of steps) counted.push([what, (await emitted(run)).map(feedbackCounts)]);
    expect(counted).toEqual([
      ['up', [{ FeedbackUp: 1 }]],
      ['up again, a comment added', []],
      ['down', [{ FeedbackDown: 1 }]],
      ['removed', [{ FeedbackRemoved: 1 }]],
      ['removed again', []],
      ['down from none', [{ FeedbackDown: 1 }]],
    ]);
  });

  test('a write racing a chat delete is refused once the message is gone: it never recreates the item', async () => {
    const { chatId, replyId } = await exchange();
    const [, reply] = await history(chatId);
    const at = { chatId, sequenceNumber: reply.sequenceNumber, messageId: replyId, userId };
    const repository = new FeedbackRepository(db, app.tableName);
    // The delete empties the partition after the service found the message.
    expect((await app.request('DELETE', `/chat/${chatId}`, { token })).status).toBe(200);
    expect(await repository.set(at, { rating: 'up', updatedAt: new Date().toISOString() })).toBeUndefined();
    expect(await repository.remove(at)).toBeUndefined();
    const item = await db.send(
      new GetCommand({ TableName: app.tableName, Key: messageKey(chatId, reply.sequenceNumber), ConsistentRead: true }),
    );
    expect(item.Item).toBeUndefined();
  });

  test('a rating given while the reply streams outlasts the reply being finished (and stopped)', async () => {
    const { replies, messages } = deps();
    const repository = new FeedbackRepository(db, app.tableName);
    for (const end of ['finish', 'stop then finish'] as const) {
      const { chatId, promptId } = await exchange();
      const now = new Date().toISOString();
      const state = await replies.start({ id: createId(), chatId, userId, promptId, promptSequence: 1, now });
      const { sequenceNumber } = state.message;
      const feedback = { rating: 'down' as const, comment: 'Too slow', updatedAt: now };
      const rated = await repository.set({ chatId, sequenceNumber, messageId: state.message.id, userId }, feedback);
      expect(rated?.message).toMatchObject({ status: 'streaming', feedback });
      if (end === 'stop then finish') expect(await replies.stop(chatId, sequenceNumber)).toBe(true);
      await replies.finish(chatId, sequenceNumber, { text: 'Done.', deltaEnds: [5], status: 'complete', now });
      const finished = (await messages.byId(chatId, state.message.id))!;
      expect([end, finished.status, finished.message, finished.feedback]).toEqual([
        end,
        end === 'finish' ? 'complete' : 'stopped',
        'Done.',
        feedback,
      ]);
    }
  });
});
