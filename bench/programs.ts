import { performance } from 'node:perf_hooks';
import { dynamo, tableName } from '#shared/clients.ts';
import { ApiKeyRepository } from '#shared/auth/api-key-repository.ts';
import { ApiKeyVerifier } from '#shared/auth/api-keys.ts';
import { serviceTokenSettings, ServiceTokens } from '#shared/auth/service-token.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { UserRepository } from '#shared/users/user-repository.ts';
import type { Benchmark } from './lib/context.ts';
import { keepAliveAgent, postSse, request, type SseTiming } from './lib/http.ts';
import { info, median, quantile, ratioCheck, type Check } from './lib/report.ts';

// Programs: what a program calling the service with an API key pays beside a person in the app.
// (a) First token: request sent → the client's first content token, through
//     POST /openai/chat/completions (stream: true; the program's route, with its API key) against
//     POST /message/logged-in (stream: true; the app's route, with the service JWT), the same
//     prompt, one of each in turn (order shuffled per round), medians. Target ≤ 1.1 ×. The
//     OpenAI route with the JWT is timed too, so the key's share and the route's share separate.
// (b) Authentication: GET /me (it takes both) with an API key against the same user's service
//     JWT, one of each in turn (shuffled), medians at concurrency 1. Target ≤ 1.1 ×.
// Beside (b), the pieces called directly (no HTTP), interleaved: the key's check (its GetItem,
// consistent, and the SHA-256 comparison), the JWT's (HMAC, once per warm instance) and the
// user's GetItem both paths make, so a miss comes with its cause.
// The model server answers at once, so (a) times the service's own path to the model and back.

const STREAM_ROUNDS = 40;
const STREAM_WARMUP = 3;
const AUTH_ROUNDS = 300;
const AUTH_WARMUP = 30;
const RATIO_MAX = 1.1;
const PROMPT = 'Tell me about streaming';

/** performance.now() of the first event whose delta carries text (OpenAI's chunks or the app's). */
function firstTokenAt(sse: SseTiming, shape: 'openai' | 'app'): number | undefined {
  for (const e of sse.events) {
    if (e.event || e.data === '' || e.data === '[DONE]') continue;
    let parsed: any;
    try {
      parsed = JSON.parse(e.data);
    } catch {
      continue;
    }
    const content = shape === 'openai' ? parsed.choices?.[0]?.delta?.content : parsed.content;
    if (typeof content === 'string' && content !== '') return e.at;
  }
  return undefined;
}

const shuffled = <T>(xs: T[]) => [...xs].sort(() => Math.random() - 0.5);

export const programs: Benchmark = {
  name: 'programs',
  title: 'API keys and the OpenAI-compatible route against the service JWT and POST /message/logged-in',
  async run(ctx) {
    const svc = await ctx.service();
    const user = await svc.signIn('bench-programs@example.com');
    const created = await svc.api('POST', '/me/api-keys', user.token, { name: 'bench' });
    if (created.status !== 201) throw new Error(`creating a key: ${created.status} ${created.body}`);
    const key = created.json.data.key as string;
    const agent = keepAliveAgent(4);
    const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

    const timeStream = async (url: string, token: string, body: object, shape: 'openai' | 'app') => {
      const sent = performance.now();
      const sse = await postSse(url, bearer(token), JSON.stringify(body), agent);
      if (sse.status !== 200) throw new Error(`${url} answered ${sse.status}: ${sse.body.slice(0, 300)}`);
      const at = firstTokenAt(sse, shape);
      if (at === undefined) throw new Error(`${url} streamed no token: ${sse.body.slice(0, 300)}`);
      return at - sent;
    };
    const openai = (token: string) => () =>
      timeStream(
        `${svc.url}/openai/chat/completions`,
        token,
        { model: 'chat', messages: [{ role: 'user', content: PROMPT }], stream: true },
        'openai',
      );
    const app = async () => {
      // The chat exists before the clock starts: a program's request carries its conversation.
      const chat = await svc.api('POST', '/chat', user.token, { name: 'programs bench', type: 'text' });
      if (chat.status !== 201) throw new Error(`creating a chat: ${chat.status} ${chat.body}`);
      return timeStream(
        `${svc.url}/message/logged-in`,
        user.token,
        { chatId: chat.json.data.id, prompt: PROMPT, stream: true },
        'app',
      );
    };
    const streams: Record<string, () => Promise<number>> = {
      'message/logged-in, JWT': app,
      'openai, API key': openai(key),
      'openai, JWT': openai(user.token),
    };
    const me = (token: string) => async () => {
      const r = await request(`${svc.url}/me`, { method: 'GET', headers: bearer(token), agent });
      if (r.status !== 200) throw new Error(`GET /me answered ${r.status}: ${r.body.slice(0, 300)}`);
      return r.ms;
    };
    const auths: Record<string, () => Promise<number>> = { JWT: me(user.token), 'API key': me(key) };

    const sample = async (fns: Record<string, () => Promise<number>>, rounds: number, warmup: number) => {
      for (let i = 0; i < warmup; i++) for (const fn of Object.values(fns)) await fn();
      const out = new Map<string, number[]>(Object.keys(fns).map((k) => [k, []]));
      for (let i = 0; i < rounds; i++)
        for (const name of shuffled(Object.keys(fns))) out.get(name)!.push(await fns[name]!());
      return out;
    };

    try {
      ctx.log(`programs: first token, ${STREAM_ROUNDS} rounds`);
      const s = await sample(streams, STREAM_ROUNDS, STREAM_WARMUP);
      ctx.log(`programs: GET /me, ${AUTH_ROUNDS} rounds`);
      const a = await sample(auths, AUTH_ROUNDS, AUTH_WARMUP);

      ctx.log('programs: timing the pieces directly');
      const verifier = new ApiKeyVerifier(new ApiKeyRepository(dynamo(), tableName()), systemClock);
      const tokens = new ServiceTokens(serviceTokenSettings(config()), systemClock);
      const users = new UserRepository(dynamo(), tableName());
      const pieces: Record<string, () => Promise<unknown>> = {
        'API key check (GetItem + SHA-256)': () => verifier.verify(key),
        'service JWT check (HMAC, cached per instance)': () => tokens.verify(user.token),
        'user confirmation (GetItem), both paths': () => users.get(user.userId),
      };
      const pieceSamples = new Map<string, number[]>(Object.keys(pieces).map((k) => [k, []]));
      for (let i = 0; i < AUTH_ROUNDS; i++) {
        for (const [name, fn] of Object.entries(pieces)) {
          const t0 = performance.now();
          await fn();
          pieceSamples.get(name)!.push(performance.now() - t0);
        }
      }

      const app50 = median(s.get('message/logged-in, JWT')!);
      const checks: Check[] = [
        ratioCheck(
          'first token, POST /openai/chat/completions (key) ÷ POST /message/logged-in (JWT), median',
          median(s.get('openai, API key')!),
          app50,
          'ms',
          { max: RATIO_MAX },
        ),
        info('first token, POST /openai/chat/completions (JWT), median', median(s.get('openai, JWT')!), 'ms', {
          baseline: app50,
          ratio: median(s.get('openai, JWT')!) / app50,
        }),
        info('first token, openai (key), p90', quantile(s.get('openai, API key')!, 0.9), 'ms', {
          baseline: quantile(s.get('message/logged-in, JWT')!, 0.9),
        }),
        ratioCheck(
          'GET /me with an API key ÷ with the service JWT, median @1',
          median(a.get('API key')!),
          median(a.get('JWT')!),
          'ms',
          { max: RATIO_MAX },
        ),
        info('GET /me with an API key, p90 @1', quantile(a.get('API key')!, 0.9), 'ms', {
          baseline: quantile(a.get('JWT')!, 0.9),
        }),
      ];
      return {
        checks,
        details: [
          {
            title: `first token by variant (ms, ${STREAM_ROUNDS} each)`,
            header: ['variant', 'p50', 'p90'],
            rows: [...s].map(([name, xs]) => [name, median(xs), quantile(xs, 0.9)]),
          },
          {
            title: `authentication pieces, called directly (ms, ${AUTH_ROUNDS} calls each, interleaved)`,
            header: ['piece', 'p50', 'p90'],
            rows: [...pieceSamples].map(([name, xs]) => [name, median(xs), quantile(xs, 0.9)]),
          },
        ],
        notes: [
          `First token: ${STREAM_ROUNDS} rounds of one request per variant (shuffled) after ${STREAM_WARMUP} warm-up rounds; request sent → first content token; the app's chat is created before the clock starts. GET /me: ${AUTH_ROUNDS} rounds of one request per variant (shuffled) after ${AUTH_WARMUP} warm-up rounds; keep-alive connections.`,
        ],
        data: { streams: Object.fromEntries(s), auth: Object.fromEntries(a) },
      };
    } finally {
      agent.destroy();
    }
  },
};
