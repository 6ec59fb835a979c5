import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Benchmark } from './lib/context.ts';
import { missingFiles } from './lib/context.ts';
import { withStartingEnv } from './lib/env.ts';
import { absoluteCheck, info } from './lib/report.ts';

// Load: the security engineer's bounded load run (test/load/load.ts) against `npm start` in a
// child process (so the service and the load generator do not share an event loop), with the
// loopback model server streaming a 16-word reply, 15 ms between deltas: 50 streamed replies and
// 200 JSON requests (reads and order writes) fired at once. Target: zero errors; p50 and p99 are
// reported (no latency target: the streams' length is set by the model server).

const STREAMS = 50;
const JSON_REQUESTS = 200;
const USERS = 10;

export const load: Benchmark = {
  name: 'load',
  title: `${STREAMS} streamed replies and ${JSON_REQUESTS} JSON requests at once against npm start (test/load/load.ts)`,
  requires: () => missingFiles('test/load/load.ts', 'test/helpers/server-process.ts'),
  async run(ctx) {
    const { runLoad, signInLocal } = await import('../test/load/load.ts');
    const { startServerProcess } = await import('../test/helpers/server-process.ts');
    const { startOpenAiTestServer } = await import('../test/helpers/openai-server.ts');
    const ai = await startOpenAiTestServer();
    ai.setReply('One two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen.');
    ai.chunkDelayMs = 15;
    const dataDir = await mkdtemp(join(tmpdir(), 'bench-load-'));
    let server: Awaited<ReturnType<typeof startServerProcess>> | undefined;
    try {
      ctx.log('load: starting npm start in a child process');
      // Its own emulators, table and identity provider: not the wiring this process exported.
      server = await withStartingEnv(() =>
        startServerProcess({
          DATA_DIR: dataDir,
          OPENAI_API_KEY: 'bench-key',
          OPENAI_BASE_URL: ai.baseURL,
          ADMIN_EMAILS: 'bench-load-0@example.com', // the load's first user makes the product it orders
        }),
      );
      const tokens = await signInLocal(server.url, dataDir, USERS, 'bench-load');
      // A small run first: the child's functions are imported on first use (cold starts).
      await runLoad({ url: server.url, tokens, streams: 2, json: 10 });
      ctx.log(`load: ${STREAMS} streams and ${JSON_REQUESTS} JSON requests at once`);
      const r = await runLoad({ url: server.url, tokens, streams: STREAMS, json: JSON_REQUESTS });
      const streamed = ai.chatRequests().filter((q) => q.stream).length;
      return {
        checks: [
          absoluteCheck(`streamed replies: errors (of ${r.streams.count})`, r.streams.errors, '', { eq: 0 }),
          absoluteCheck(`JSON requests: errors (of ${r.json.count})`, r.json.errors, '', { eq: 0 }),
          info('streamed reply, whole, p50', r.streams.p50, 'ms'),
          info('streamed reply, whole, p99', r.streams.p99, 'ms'),
          info('streamed reply, first data event, p50', r.streams.firstEventP50, 'ms'),
          info('streamed reply, first data event, p99', r.streams.firstEventP99, 'ms'),
          info('JSON request p50', r.json.p50, 'ms'),
          info('JSON request p99', r.json.p99, 'ms'),
          info('wall time', r.wallMs, 'ms'),
        ],
        notes: [
          `The model server streams 16 deltas 15 ms apart, so a whole reply takes at least ~240 ms. JSON mix: ${JSON.stringify(r.json.byRoute)}. ${streamed} streamed model requests in all (warm-up included).`,
          ...r.failures.map((f) => `failure: ${f}`),
        ],
        data: r as unknown as Record<string, unknown>,
      };
    } finally {
      await server?.stop();
      await ai.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  },
};
