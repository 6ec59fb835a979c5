import fc from 'fast-check';
import { useReplyTestApp } from '#test/helpers/chat-calls.ts';
import { readSse } from '#test/helpers/sse.ts';
import { storedMessages } from '#test/helpers/stored-messages.ts';

// The model misbehaving, generated: sequences of prompts (whole and streamed, some sent at the
// same time) while the loopback OpenAI-compatible server answers 429 or 500 (once or past the
// retries), never answers, cuts its stream or goes quiet in the middle of one. Whatever happens,
// the invariants hold: every answer is terminal and documented (200, or 502/503/504 in the
// envelope; a stream always ends with [DONE]), every user message is stored exactly once
// (before the model is called), every stored reply is exactly what the client received (marked
// incomplete when it was cut), sequence numbers are 1..n without gaps or repeats, and the chat
// still answers afterwards. (messages.test.ts and streaming.test.ts pin each fault alone.)

const RUNS = Number(process.env.FAULT_RUNS ?? 20);

const tally = { prompts: 0, ok: 0, failed: 0, partial: 0, byFault: {} as Record<string, number> };

const { app } = useReplyTestApp('faults@example.com', {
  // Reached on purpose by the faults "no answer" and "stream goes quiet"; long enough that no
  // answering call does on a loaded machine (the chat after the faults must be answered).
  OPENAI_TIMEOUT_MS: '5000',
  OPENAI_MAX_RETRIES: '1',
  STREAM_HEARTBEAT_MS: '300',
});
afterAll(() => {
  console.log(
    `Model faults: ${tally.prompts} prompts (${tally.ok} answered, ${tally.partial} cut short and stored incomplete, ${tally.failed} failed cleanly); faults injected: ${Object.entries(
      tally.byFault,
    )
      .map(([k, n]) => `${k} ×${n}`)
      .join(', ')}`,
  );
});

type Fault =
  | 'none'
  | '429 once'
  | '500 once'
  | '429 past the retries'
  | '500 past the retries'
  | 'no answer'
  | 'stream cut'
  | 'stream goes quiet';
const fault = fc.oneof(
  { weight: 2, arbitrary: fc.constant<Fault>('none') },
  {
    weight: 4,
    arbitrary: fc.constantFrom<Fault>(
      '429 once',
      '500 once',
      'stream cut',
      '429 past the retries',
      '500 past the retries',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom<Fault>('no answer', 'stream goes quiet') },
);
const step = fc.record({
  fault,
  /** Where a stream fault strikes (deltas before it). */
  after: fc.integer({ min: 0, max: 3 }),
  /** Prompts sent at once: true = streamed. */
  prompts: fc.array(fc.boolean(), { minLength: 1, maxLength: 3 }),
});

function inject(f: Fault, after: number) {
  tally.byFault[f] = (tally.byFault[f] ?? 0) + 1;
  if (f === '429 once') app.ai.failNext(1, 429);
  if (f === '500 once') app.ai.failNext(1, 500, { retryAfterSeconds: 0 });
  if (f === '429 past the retries') app.ai.failNext(2, 429);
  if (f === '500 past the retries') app.ai.failNext(2, 500, { retryAfterSeconds: 0 });
  if (f === 'no answer') app.ai.stallNext(1);
  if (f === 'stream cut') app.ai.cutStreamAfter(after);
  if (f === 'stream goes quiet') app.ai.stallStreamAfter(after);
}

interface Outcome {
  prompt: string;
  /** The reply text the client received (whole or the deltas of a stream); undefined when none. */
  received?: string;
  complete: boolean;
}

async function send(chatId: string, prompt: string, stream: boolean): Promise<Outcome> {
  tally.prompts++;
  const res = await fetch(`${app.url}/message/logged-in`, {
    method: 'POST',
    headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ chatId, prompt, stream }),
    signal: AbortSignal.timeout(60_000), // a hung answer fails the run; generous for a loaded machine
  });
  if (!stream) {
    const body = (await res.json()) as any;
    if (res.status === 200) {
      tally.ok++;
      expect(body).toMatchObject({ success: true, statusCode: 200, data: { response: expect.any(String) } });
      return { prompt, received: body.data.response, complete: true };
    }
    tally.failed++;
    expect([502, 503, 504]).toContain(res.status);
    expect(body).toEqual({ success: false, statusCode: res.status, message: expect.any(String) });
    return { prompt, complete: false };
  }
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const sse = await readSse(res);
  expect(sse.last()).toBe('[DONE]');
  expect(sse.raw.endsWith('data: [DONE]\n\n')).toBe(true);
  const text = sse.deltas().join('');
  const failed = sse.named('error').length > 0;
  if (failed) expect(sse.named('error')[0]).toEqual({ message: expect.any(String) });
  if (!failed) tally.ok++;
  else if (text) tally.partial++;
  else tally.failed++;
  // A streamed reply is stored from its start: a failed one stays, marked incomplete, even when empty.
  return { prompt, received: text, complete: !failed };
}

const sorted = <T>(list: T[]) => [...list].sort();

test('under any sequence of model faults: terminal answers, no lost user message, replies stored as received, no gaps', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 4 }), async (steps) => {
      run++;
      const chat = (
        await app.request('POST', '/chat', { token: app.token, body: { type: 'text', name: `run ${run}` } })
      ).body.data;
      const outcomes: Outcome[] = [];
      for (const [i, s] of steps.entries()) {
        app.ai.reset();
        // A whole reply never meets a stream fault; it would wait for the next stream.
        const applies = !(s.fault.startsWith('stream') && !s.prompts.some(Boolean));
        if (applies) inject(s.fault, s.after);
        outcomes.push(
          ...(await Promise.all(
            s.prompts.map((stream, j) =>
              send(chat.id, `run ${run} step ${i} prompt ${j} ${stream ? 'streamed' : 'whole'}`, stream),
            ),
          )),
        );
      }
      app.ai.reset();
      const stored = await storedMessages(app, chat.id); // every branch: prompts sent at once may end apart
      // Every prompt stored once, as a user message.
      expect(sorted(stored.filter((m) => m.messageType === 'user').map((m) => m.message))).toEqual(
        sorted(outcomes.map((o) => o.prompt)),
      );
      // Every reply the client received is stored as it was received; cut ones are marked incomplete; nothing else.
      const replies = stored.filter((m) => m.messageType === 'ai');
      expect(sorted(replies.map((m) => `${m.incomplete ? 'incomplete' : 'complete'}: ${m.message}`))).toEqual(
        sorted(
          outcomes
            .filter((o) => o.received !== undefined)
            .map((o) => `${o.complete ? 'complete' : 'incomplete'}: ${o.received}`),
        ),
      );
      // Whole replies are what the model said.
      for (const o of outcomes.filter((x) => x.complete)) expect(o.received).toBe(`You said: ${o.prompt}`);
      // Sequence numbers 1..n, each once.
      expect(stored.map((m) => m.sequenceNumber).sort((a, b) => a - b)).toEqual(stored.map((_, k) => k + 1));
      // The chat is not wedged: the next prompt is answered.
      const after = await send(chat.id, `run ${run} after the faults`, false);
      expect(after.received).toBe(`You said: run ${run} after the faults`);
    }),
    { numRuns: RUNS, endOnFailure: true },
  );
}, 480_000); // each "no answer" or "stream goes quiet" fault costs an OPENAI_TIMEOUT_MS
