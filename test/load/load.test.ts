import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServerProcess, type ServerProcess } from '#test/helpers/server-process.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from '#test/helpers/openai-server.ts';
import { formatLoad, runLoad, signInLocal } from './load.ts';

// Load, bounded and on loopback, against `npm start` (a child process, so the service and the
// load generator do not share an event loop): 50 streamed replies (each a few hundred ms of
// deltas from the loopback model server) and 200 JSON requests at once, with zero errors. The
// latencies are printed, never asserted (the machine is shared). LOAD_TEST=1 runs the heavy
// version (200 streams and 2,000 JSON requests); `npm run bench` can call runLoad the same way.

const HEAVY = process.env.LOAD_TEST === '1';
const STREAMS = HEAVY ? 200 : 50;
const JSON_REQUESTS = HEAVY ? 2000 : 200;

let ai: OpenAiTestServer;
let server: ServerProcess;
let dataDir: string;

beforeAll(async () => {
  ai = await startOpenAiTestServer();
  ai.setReply('One two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen.');
  ai.chunkDelayMs = 15;
  dataDir = await mkdtemp(join(tmpdir(), 'load-'));
  server = await startServerProcess({
    DATA_DIR: dataDir,
    OPENAI_API_KEY: 'test-key',
    OPENAI_BASE_URL: ai.baseURL,
    ADMIN_EMAILS: 'load-0@example.com', // the load's first user makes the product it orders
  });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await ai?.close();
  await rm(dataDir, { recursive: true, force: true });
});

test(`${STREAMS} streamed replies and ${JSON_REQUESTS} JSON requests at once: zero errors`, async () => {
  const tokens = await signInLocal(server.url, dataDir, 10);
  await runLoad({ url: server.url, tokens, streams: 2, json: 10 }); // warm-up: the child imports each function on first use
  ai.reset();
  ai.setReply('One two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen.');
  ai.chunkDelayMs = 15;
  const result = await runLoad({ url: server.url, tokens, streams: STREAMS, json: JSON_REQUESTS });
  console.log(formatLoad(result));
  expect(result.failures).toEqual([]);
  expect(result.streams).toMatchObject({ count: STREAMS, errors: 0 });
  expect(result.json).toMatchObject({ count: JSON_REQUESTS, errors: 0 });
  // Every stream really reached the model and streamed its deltas.
  expect(ai.chatRequests().filter((r) => r.stream)).toHaveLength(STREAMS);
}, 180_000);
