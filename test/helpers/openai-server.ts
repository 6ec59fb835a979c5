import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { lexicalEmbedding } from '../../shared/ai/lexical-embedding.ts';
import { listenOnLoopback, releaseAll } from './loopback-server.ts';

// A loopback OpenAI-compatible server for tests: POST /v1/chat/completions (whole and streamed,
// with `stream_options.include_usage`) and POST /v1/embeddings (deterministic lexical vectors).
// Every request is recorded; faults are queued per test.
//
//   const ai = await startOpenAiTestServer();
//   const app = await startTestApp({ env: { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: ai.baseURL } });
//   ai.setReply('Hello there');          // or (req) => `echo: ${lastUserMessage(req)}`
//   ai.failNext(2, 429);                 // the next 2 requests answer 429 (retry-after: 0)
//   ai.stallNext();                      // the next request never answers
//   ai.cutStreamAfter(3);                // the next stream sends 3 deltas, then the socket is cut
//   ai.stallStreamAfter(3);              // the next stream sends 3 deltas, then goes quiet forever
//   const release = ai.holdStreamAfter(2); // ...goes quiet until release() is called
//   const go = ai.holdNext({ only: 'embeddings' }); // the next request is answered once go() is called
//   ai.embeddingBatchLimit = 16;         // more inputs in one request → 400, like OpenAI's limit
//   ai.embeddingLatency = (inputs) => wait(inputs); // embeddings answered once it resolves (a provider's time)
//   ai.chatRequests().at(-1)!.messages   // what the model was sent
//   ai.reset(); await ai.close();
//
// Faults apply to the next request of the kind named (`only`), chat completions by default for
// stream faults and any request for failNext/stallNext. A stream is split into one delta per
// word (the word with its following whitespace), `chunkDelayMs` apart.

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  receivedAt: number;
  /** True when the client closed the connection before the answer ended (e.g. an abort). */
  clientClosedEarly: boolean;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'developer' | 'tool';
  content: string;
}

export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
  max_completion_tokens?: number;
  [key: string]: unknown;
}

type Kind = 'chat' | 'embeddings' | 'any';

type Fault =
  | { type: 'status'; status: number; retryAfterSeconds?: number; kind: Kind }
  | { type: 'stall'; kind: Kind }
  | { type: 'cut'; afterDeltas: number; kind: Kind }
  | { type: 'hold'; afterDeltas: number; release: Promise<void>; kind: Kind }
  | { type: 'wait'; release: Promise<void>; kind: Kind };

export interface OpenAiTestServer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** The value for OPENAI_BASE_URL: `${url}/v1`. */
  baseURL: string;
  /** Every request received, oldest first. */
  requests: RecordedRequest[];
  /** Bodies of the chat completion requests, oldest first. */
  chatRequests(): ChatCompletionRequest[];
  /** Bodies of the embedding requests, oldest first. */
  embeddingRequests(): { input: string | string[]; model: string; dimensions?: number }[];
  /** Requests received per path, e.g. count('/v1/embeddings'); all requests without a path. */
  count(path?: string): number;
  /** The reply text (or a function of the request); default: `You said: <last user message>`. */
  setReply(reply: string | ((request: ChatCompletionRequest) => string)): void;
  /** Delay between streamed deltas (default 0). */
  chunkDelayMs: number;
  /** The next `n` requests answer `status` (429 carries retry-after, default 0 seconds). */
  failNext(n: number, status?: number, options?: { retryAfterSeconds?: number; only?: Kind }): void;
  /** The next `n` requests are accepted and never answered (until the client gives up or close()). */
  stallNext(n?: number, options?: { only?: Kind }): void;
  /** The next streamed reply sends `afterDeltas` deltas, then the connection is destroyed. */
  cutStreamAfter(afterDeltas: number): void;
  /** The next streamed reply sends `afterDeltas` deltas, then stays silent without ending. */
  stallStreamAfter(afterDeltas: number): void;
  /** The next streamed reply sends `afterDeltas` deltas and waits for the returned release(). */
  holdStreamAfter(afterDeltas: number): () => void;
  /** The next request (of the kind named, any by default) is answered as usual once the returned release() is called. */
  holdNext(options?: { only?: Kind }): () => void;
  /** More inputs than this in one embeddings request answer 400 (OpenAI: 2048). */
  embeddingBatchLimit: number;
  /** Dimensions of embeddings when the request names none (text-embedding-3-small: 1536). */
  embeddingDimensions: number;
  /** Awaited before each valid embeddings request is answered (a provider's latency); none by default. */
  embeddingLatency?: (inputs: string[]) => Promise<void>;
  /** Clears recorded requests, queued faults, the reply and settings. */
  reset(): void;
  close(): Promise<void>;
}

/** The text of the last user message of a chat completion request. */
export function lastUserMessage(request: ChatCompletionRequest): string {
  return [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
}

/** A rough token count (about four characters per token), enough for usage figures. */
const tokensOf = (text: string) => Math.max(1, Math.ceil(text.length / 4));

/** One delta per word, each with the whitespace that follows it. */
export function splitIntoDeltas(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startOpenAiTestServer(): Promise<OpenAiTestServer> {
  const requests: RecordedRequest[] = [];
  let faults: Fault[] = [];
  let reply: string | ((request: ChatCompletionRequest) => string) = (req) => `You said: ${lastUserMessage(req)}`;
  const pendingReleases = new Set<() => void>();

  const takeFault = (kind: 'chat' | 'embeddings', streaming: boolean): Fault | undefined => {
    const i = faults.findIndex((f) => {
      if (f.kind !== 'any' && f.kind !== kind) return false;
      // Stream faults wait for a streamed chat request.
      if ((f.type === 'cut' || f.type === 'hold') && !streaming) return false;
      return true;
    });
    return i < 0 ? undefined : faults.splice(i, 1)[0];
  };

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${requests.length}`, ...headers });
    res.end(JSON.stringify(body));
  };
  const apiError = (
    res: ServerResponse,
    status: number,
    message: string,
    type: string,
    headers: Record<string, string> = {},
  ) => json(res, status, { error: { message, type, param: null, code: null } }, headers);

  async function chat(
    req: ChatCompletionRequest,
    res: ServerResponse,
    record: RecordedRequest,
    fault: Fault | undefined,
  ) {
    const text = typeof reply === 'function' ? reply(req) : reply;
    const promptTokens = req.messages.reduce((n, m) => n + tokensOf(String(m.content)) + 3, 0);
    const id = `chatcmpl-${requests.length}`;
    const created = Math.floor(Date.now() / 1000);
    const deltas = splitIntoDeltas(text);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: deltas.length,
      total_tokens: promptTokens + deltas.length,
    };
    if (!req.stream) {
      json(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model: req.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: text, refusal: null },
            finish_reason: 'stop',
            logprobs: null,
          },
        ],
        usage,
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    const chunk = (delta: object, finish: string | null, extra: object = {}) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: req.model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }], ...extra })}\n\n`;
    // Resolves once the bytes are handed to the socket (so a cut comes after them, not instead).
    const write = (text: string) => new Promise<void>((resolve) => res.write(text, () => resolve()));
    await write(chunk({ role: 'assistant', content: '' }, null));
    for (let i = 0; i < deltas.length; i++) {
      if (fault && (fault.type === 'cut' || fault.type === 'hold') && i === fault.afterDeltas) {
        if (fault.type === 'cut') {
          res.socket?.destroy();
          return;
        }
        await fault.release;
        if (record.clientClosedEarly) return;
      }
      if (server.chunkDelayMs > 0) await sleep(server.chunkDelayMs);
      if (record.clientClosedEarly) return;
      await write(chunk({ content: deltas[i] }, null));
    }
    res.write(chunk({}, 'stop'));
    if (req.stream_options?.include_usage) {
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: req.model, choices: [], usage })}\n\n`,
      );
    }
    res.end('data: [DONE]\n\n');
  }

  function embeddings(body: any, res: ServerResponse, waited = false) {
    const input: unknown = body?.input;
    const inputs = typeof input === 'string' ? [input] : input;
    if (!Array.isArray(inputs) || inputs.length === 0 || !inputs.every((s) => typeof s === 'string')) {
      return apiError(res, 400, "'$.input' is invalid. Please check the API reference.", 'invalid_request_error');
    }
    if (inputs.length > server.embeddingBatchLimit) {
      return apiError(
        res,
        400,
        `'$.input' is invalid: at most ${server.embeddingBatchLimit} inputs per request, got ${inputs.length}.`,
        'invalid_request_error',
      );
    }
    if (!waited && server.embeddingLatency) {
      void server.embeddingLatency(inputs as string[]).then(() => embeddings(body, res, true));
      return;
    }
    const dimensions: number = body.dimensions ?? server.embeddingDimensions;
    let tokens = 0;
    const data = (inputs as string[]).map((text, index) => {
      tokens += tokensOf(text);
      const vector = lexicalEmbedding(text, dimensions);
      const embedding =
        body.encoding_format === 'base64'
          ? Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64')
          : Array.from(vector);
      return { object: 'embedding', index, embedding };
    });
    json(res, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  }

  const httpServer = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      let body: any;
      try {
        body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      } catch {
        body = Buffer.concat(chunks).toString('utf8');
      }
      const record: RecordedRequest = {
        method: req.method ?? 'GET',
        path,
        headers: req.headers,
        body,
        receivedAt: Date.now(),
        clientClosedEarly: false,
      };
      requests.push(record);
      res.on('close', () => {
        if (!res.writableFinished) record.clientClosedEarly = true;
      });
      const kind = path === '/v1/chat/completions' ? 'chat' : path === '/v1/embeddings' ? 'embeddings' : undefined;
      if (req.method !== 'POST' || !kind)
        return apiError(res, 404, `Unknown path ${req.method} ${path}`, 'invalid_request_error');
      if (!String(req.headers.authorization ?? '').startsWith('Bearer ')) {
        return apiError(res, 401, 'Missing API key', 'invalid_request_error');
      }
      const fault = takeFault(kind, kind === 'chat' && body?.stream === true);
      if (fault?.type === 'wait') {
        void fault.release.then(() => {
          if (kind === 'embeddings') return embeddings(body, res);
          chat(body as ChatCompletionRequest, res, record, undefined).catch(() => res.destroy());
        });
        return;
      }
      if (fault?.type === 'stall') return; // never answered
      if (fault?.type === 'status') {
        const headers: Record<string, string> = {};
        if (fault.retryAfterSeconds !== undefined) headers['retry-after'] = String(fault.retryAfterSeconds);
        const type = fault.status === 429 ? 'rate_limit_exceeded' : 'server_error';
        return apiError(res, fault.status, `Injected test failure (${fault.status})`, type, headers);
      }
      if (kind === 'embeddings') return embeddings(body, res);
      chat(body as ChatCompletionRequest, res, record, fault).catch(() => res.destroy());
    });
  });
  const listening = await listenOnLoopback(httpServer);
  const { url } = listening;

  const hold = (afterDeltas: number, releasable: boolean): (() => void) => {
    let release!: () => void;
    const promise = new Promise<void>((resolve) => (release = resolve));
    pendingReleases.add(release);
    faults.push({ type: 'hold', afterDeltas, release: promise, kind: 'chat' });
    return releasable ? release : () => undefined;
  };

  const server: OpenAiTestServer = {
    url,
    baseURL: `${url}/v1`,
    requests,
    chunkDelayMs: 0,
    embeddingBatchLimit: 2048,
    embeddingDimensions: 1536,
    chatRequests: () =>
      requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body as ChatCompletionRequest),
    embeddingRequests: () => requests.filter((r) => r.path === '/v1/embeddings').map((r) => r.body),
    count: (path) => (path ? requests.filter((r) => r.path === path).length : requests.length),
    setReply(r) {
      reply = r;
    },
    failNext(n, status = 429, options = {}) {
      const retryAfterSeconds = options.retryAfterSeconds ?? (status === 429 ? 0 : undefined);
      for (let i = 0; i < n; i++)
        faults.push({
          type: 'status',
          status,
          kind: options.only ?? 'any',
          ...(retryAfterSeconds !== undefined && { retryAfterSeconds }),
        });
    },
    stallNext(n = 1, options = {}) {
      for (let i = 0; i < n; i++) faults.push({ type: 'stall', kind: options.only ?? 'any' });
    },
    cutStreamAfter(afterDeltas) {
      faults.push({ type: 'cut', afterDeltas, kind: 'chat' });
    },
    stallStreamAfter(afterDeltas) {
      hold(afterDeltas, false);
    },
    holdStreamAfter(afterDeltas) {
      return hold(afterDeltas, true);
    },
    holdNext(options = {}) {
      let release!: () => void;
      const promise = new Promise<void>((resolve) => (release = resolve));
      pendingReleases.add(release);
      faults.push({ type: 'wait', release: promise, kind: options.only ?? 'any' });
      return release;
    },
    reset() {
      requests.length = 0;
      faults = [];
      releaseAll(pendingReleases);
      reply = (req) => `You said: ${lastUserMessage(req)}`;
      server.chunkDelayMs = 0;
      server.embeddingBatchLimit = 2048;
      server.embeddingDimensions = 1536;
      server.embeddingLatency = undefined;
    },
    async close() {
      releaseAll(pendingReleases);
      await listening.close();
    },
  };
  return server;
}
