// A realistic embedding provider's time, for the loopback server (`ai.embeddingLatency`): each
// request takes a fixed base plus a time per token, and at most `concurrency` requests are worked
// on at once (later ones wait their turn, as behind a provider's per-key capacity).
//
// Why these figures (OpenAI text-embedding-3-small; the provider documents limits, not latency):
//   - base 200 ms: the round trip and queueing of a small embeddings request as public
//     measurements report it (100–300 ms from a client in the same region);
//   - 20 µs per token (50,000 tokens/s within one request): a full request at OpenAI's documented
//     limit of 300,000 tokens then takes ~6 s, the order publicly reported for 2,048-input batches;
//     per token because the model's work grows with the text it reads;
//   - 8 requests at once: a per-client bound, loose enough that neither side here is held by it
//     (LangChain's OpenAIEmbeddings sends 2 at a time by default, the service 4), tight enough that
//     a client fanning out into many small requests would queue.
// Tokens are counted as OpenAI's rule of thumb does, ~4 characters each (cheap: this server runs in
// the bench's process beside the service). Each figure can be changed from the environment.

export interface LatencyModel {
  baseMs: number;
  usPerToken: number;
  concurrency: number;
}

export function latencyModelFromEnv(env: NodeJS.ProcessEnv = process.env): LatencyModel {
  const num = (name: string, fallback: number) => {
    const v = Number(env[name]);
    return env[name] !== undefined && Number.isFinite(v) && v >= 0 ? v : fallback;
  };
  return {
    baseMs: num('EMBED_LATENCY_BASE_MS', 200),
    usPerToken: num('EMBED_LATENCY_US_PER_TOKEN', 20),
    concurrency: Math.max(1, num('EMBED_LATENCY_CONCURRENCY', 8)),
  };
}

export const describeLatency = (m: LatencyModel) =>
  `${m.baseMs} ms + ${m.usPerToken} µs/token per request, ≤ ${m.concurrency} at once`;

/** The wait for one request of `inputs` under the model; requests past the concurrency queue. */
export function embeddingLatency(model: LatencyModel): (inputs: string[]) => Promise<void> {
  let active = 0;
  const queue: (() => void)[] = [];
  const slot = async () => {
    if (active < model.concurrency) active++;
    else await new Promise<void>((r) => queue.push(r)); // the slot is handed over by release()
  };
  const release = () => {
    const next = queue.shift();
    if (next) next();
    else active--;
  };
  return async (inputs) => {
    const chars = inputs.reduce((n, s) => n + s.length, 0);
    const ms = model.baseMs + (Math.ceil(chars / 4) * model.usPerToken) / 1000;
    await slot();
    try {
      await new Promise((r) => setTimeout(r, ms));
    } finally {
      release();
    }
  };
}
