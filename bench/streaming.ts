import { performance } from 'node:perf_hooks';
import type { Benchmark } from './lib/context.ts';
import { getSse, keepAliveAgent, postSse, type SseTiming } from './lib/http.ts';
import { absoluteCheck, info, median, quantile } from './lib/report.ts';
import type { BenchService } from './lib/service.ts';

// Streaming: the time from the model server's first token to the client's first `data:` event
// of POST /message/logged-in with stream: true. The test model server holds its reply before
// the first token (holdStreamAfter(0)); the benchmark releases it once the service's request has
// reached the model (the server reaches the hold synchronously when the request arrives), and
// times from the release to the client's first data event. Target: ≤ 10 ms median.
// Beside it, for scale: the same first token read straight from the model server by a client.
// Resume: GET /chat/{chatId}/messages/{messageId}/stream with Last-Event-ID: 1 on the reply just
// streamed, from the request to the first replayed event (read from the table).

const RUNS = 30;
const TARGET_MS = 10;

const chatCompletions = '/v1/chat/completions';

/** Waits until the model server has received one more chat request than `before`. */
async function modelRequestArrived(svc: BenchService, before: number, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (svc.ai.count(chatCompletions) === before) {
    if (performance.now() > deadline) throw new Error('the service never called the model');
    await new Promise((r) => setImmediate(r));
  }
}

function firstContentAfter(sse: SseTiming, t0: number): number | undefined {
  return sse.events.find((e) => e.at >= t0 && e.data !== '' && !e.event)?.at;
}

export const streaming: Benchmark = {
  name: 'streaming',
  title: "model server's first token to the client's first data: event (POST /message/logged-in, stream: true)",
  async run(ctx) {
    const svc = await ctx.service();
    const user = await svc.signIn('bench-streamer@example.com');
    const agent = keepAliveAgent(4);
    const auth = { authorization: `Bearer ${user.token}` };

    const throughService = async (): Promise<{ gap: number; total: number; chatId: string; messageId: string }> => {
      const chat = await svc.api('POST', '/chat', user.token, { name: 'stream bench', type: 'text' });
      if (chat.status !== 201) throw new Error(`creating a chat: ${chat.status} ${chat.body}`);
      const release = svc.ai.holdStreamAfter(0);
      const before = svc.ai.count(chatCompletions);
      const sent = performance.now();
      const reading = postSse(
        `${svc.url}/message/logged-in`,
        auth,
        JSON.stringify({ chatId: chat.json.data.id, prompt: 'Tell me about streaming', stream: true }),
        agent,
      );
      await modelRequestArrived(svc, before);
      const t0 = performance.now();
      release();
      const sse = await reading;
      if (sse.status !== 200) throw new Error(`stream answered ${sse.status}: ${sse.body.slice(0, 300)}`);
      if (!sse.body.trimEnd().endsWith('data: [DONE]'))
        throw new Error(`the stream did not end with [DONE]: ${sse.body.slice(-300)}`);
      // `event: start` (which prompt this stream answers) comes before the model's first token.
      const first = sse.events.find((e) => e.data !== '' && e.event !== 'start');
      if (!first || first.event || !first.data.includes('"content"'))
        throw new Error(`the first data event is not a delta: ${JSON.stringify(first)}`);
      const start = JSON.parse(sse.events.find((e) => e.event === 'start')!.data);
      return { gap: first.at - t0, total: t0 - sent, chatId: start.chatId, messageId: start.messageId };
    };

    /** Request sent → first replayed event of a resume after event 1. */
    const resume = async (chatId: string, messageId: string): Promise<number> => {
      const sent = performance.now();
      const sse = await getSse(
        `${svc.url}/chat/${chatId}/messages/${messageId}/stream`,
        { ...auth, 'last-event-id': '1' },
        agent,
      );
      if (sse.status !== 200 || sse.firstDataAt === undefined)
        throw new Error(`resume answered ${sse.status}: ${sse.body.slice(0, 300)}`);
      return sse.firstDataAt - sent;
    };

    const direct = async (): Promise<number> => {
      const release = svc.ai.holdStreamAfter(0);
      const before = svc.ai.count(chatCompletions);
      const body = JSON.stringify({
        model: 'bench',
        messages: [{ role: 'user', content: 'Tell me about streaming' }],
        stream: true,
      });
      const reading = postSse(`${svc.ai.baseURL}/chat/completions`, { authorization: 'Bearer bench-key' }, body, agent);
      await modelRequestArrived(svc, before);
      const t0 = performance.now();
      release();
      const sse = await reading;
      const at = firstContentAfter(sse, t0);
      if (at === undefined) throw new Error('the model server sent nothing after its hold');
      return at - t0;
    };

    try {
      for (let i = 0; i < 3; i++) await throughService(); // warm-up: imports, connections
      const gaps: number[] = [];
      const totals: number[] = [];
      const directGaps: number[] = [];
      const resumes: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const r = await throughService();
        gaps.push(r.gap);
        totals.push(r.total);
        directGaps.push(await direct());
        resumes.push(await resume(r.chatId, r.messageId));
      }
      return {
        checks: [
          absoluteCheck(
            'first token → first data: event, median',
            median(gaps),
            'ms',
            { max: TARGET_MS },
            { baseline: median(directGaps), ratio: median(gaps) / median(directGaps) },
          ),
          info('first token → first data: event, p90', quantile(gaps, 0.9), 'ms', {
            baseline: quantile(directGaps, 0.9),
          }),
          info('first token → first data: event, max', Math.max(...gaps), 'ms', { baseline: Math.max(...directGaps) }),
          info('request sent → model called (auth, chat, message stored, history), median', median(totals), 'ms'),
          info('resume: request sent → first replayed event, median', median(resumes), 'ms'),
          info('resume: request sent → first replayed event, p90', quantile(resumes, 0.9), 'ms'),
        ],
        notes: [
          `${RUNS} streamed prompts, one new chat each, after 3 warm-up prompts. The baseline column is the same gap for a client reading the model server directly (no service in between).`,
        ],
        data: { gaps, totals, directGaps, resumes },
      };
    } finally {
      agent.destroy();
    }
  },
};
