import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { crc32 } from 'node:zlib';
import { lexicalEmbedding } from '../../shared/ai/lexical-embedding.ts';
import { splitIntoDeltas } from './openai-server.ts';
import { listenOnLoopback, releaseAll } from './loopback-server.ts';

// A loopback stand-in for the Amazon Bedrock runtime, speaking its wire protocol so the real
// SDK (@aws-sdk/client-bedrock-runtime, endpoint override, dummy credentials) can be driven:
//   POST /model/{modelId}/converse         JSON in, JSON out
//   POST /model/{modelId}/converse-stream  JSON in, application/vnd.amazon.eventstream out:
//        binary frames (prelude with lengths + CRC32, typed headers, JSON payload, message CRC32)
//        messageStart, contentBlockDelta (one per word), contentBlockStop, messageStop, metadata
//   POST /model/{modelId}/invoke           Titan Text Embeddings V2 / Cohere Embed v3 bodies
// Errors are what Bedrock answers: an HTTP status with `x-amzn-errortype` and `{ message }`
// before a stream, `:message-type: exception` frames inside one. Requests must carry a SigV4
// Authorization header for service `bedrock` (signatures are not verified).
//
//   const bedrock = await startBedrockTestServer();
//   env: { AI_PROVIDER: 'bedrock', BEDROCK_ENDPOINT: bedrock.url, BEDROCK_REGION: 'us-east-1' }
//   bedrock.setReply('Hello');              // or (req) => `...`
//   bedrock.failNext(2, 'ThrottlingException');   // the next 2 requests answer 429
//   bedrock.streamExceptionAfter(2, 'modelStreamErrorException'); // 2 deltas, then an exception frame
//   const release = bedrock.holdStreamAfter(2);   // 2 deltas, then wait for release()
//   bedrock.requests / converseRequests() / invokeRequests()

/** Model ids the stand-in accepts (what was tried against it; anything else is a ValidationException). */
export const CHAT_MODELS = [
  'amazon.nova-lite-v1:0',
  'amazon.nova-micro-v1:0',
  'amazon.nova-pro-v1:0',
  'anthropic.claude-3-haiku-20240307-v1:0',
  'us.amazon.nova-lite-v1:0',
  'us.anthropic.claude-3-5-haiku-20241022-v1:0',
  'eu.anthropic.claude-3-7-sonnet-20250219-v1:0',
  'meta.llama3-1-8b-instruct-v1:0',
  'mistral.mistral-large-2402-v1:0',
];
export const EMBEDDING_MODELS = [
  'amazon.titan-embed-text-v2:0',
  'cohere.embed-english-v3',
  'cohere.embed-multilingual-v3',
];

const ERROR_STATUS: Record<string, number> = {
  ThrottlingException: 429,
  ServiceUnavailableException: 503,
  InternalServerException: 500,
  ModelTimeoutException: 408,
  ValidationException: 400,
  AccessDeniedException: 403,
  ResourceNotFoundException: 404,
};

export type StreamException =
  | 'throttlingException'
  | 'modelStreamErrorException'
  | 'internalServerException'
  | 'serviceUnavailableException'
  | 'validationException';

export interface RecordedBedrockRequest {
  operation: 'converse' | 'converse-stream' | 'invoke';
  modelId: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  /** True when the client closed the connection before the answer ended. */
  clientClosedEarly: boolean;
}

export interface ConverseBody {
  messages: { role: 'user' | 'assistant'; content: { text?: string }[] }[];
  system?: { text?: string }[];
  inferenceConfig?: { maxTokens?: number };
}

type Fault =
  | { type: 'error'; name: string; operation?: RecordedBedrockRequest['operation'] }
  | { type: 'exception'; afterDeltas: number; exception: StreamException }
  | { type: 'hold'; afterDeltas: number; release: Promise<void> }
  | { type: 'cut'; afterDeltas: number };

/** The text of the last user turn of a Converse request. */
/** Whether a request carries a SigV4 signature for the service `bedrock` (its shape: the stand-ins check no more). */
export const signedForBedrock = (req: IncomingMessage) =>
  /^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/[a-z0-9-]+\/bedrock\/aws4_request, SignedHeaders=.+, Signature=[0-9a-f]{64}$/.test(
    String(req.headers.authorization ?? ''),
  );

/** What Bedrock answers a request without it: status, body and headers. */
export const BEDROCK_UNSIGNED = [
  403,
  { message: 'Missing Authentication Token' },
  { 'x-amzn-errortype': 'AccessDeniedException:' },
] as const;

export function lastUserText(body: ConverseBody): string {
  const last = [...body.messages].reverse().find((m) => m.role === 'user');
  return (last?.content ?? []).map((b) => b.text ?? '').join('\n');
}

const tokensOf = (text: string) => Math.max(1, Math.ceil(text.length / 4));

// --- application/vnd.amazon.eventstream encoding -------------------------------------------------
// Frame: total length (uint32 BE) | headers length (uint32 BE) | CRC32 of those 8 bytes |
// headers | payload | CRC32 of everything before. A header: name length (uint8), name, value
// type (7 = string), value length (uint16 BE), value.

function encodeHeaders(headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = Buffer.from(name, 'utf8');
    const v = Buffer.from(value, 'utf8');
    const h = Buffer.alloc(1 + n.length + 1 + 2 + v.length);
    h.writeUInt8(n.length, 0);
    n.copy(h, 1);
    h.writeUInt8(7, 1 + n.length);
    h.writeUInt16BE(v.length, 2 + n.length);
    v.copy(h, 4 + n.length);
    parts.push(h);
  }
  return Buffer.concat(parts);
}

export function eventStreamFrame(headers: Record<string, string>, payload: Buffer): Buffer {
  const head = encodeHeaders(headers);
  const total = 12 + head.length + payload.length + 4;
  const frame = Buffer.alloc(total);
  frame.writeUInt32BE(total, 0);
  frame.writeUInt32BE(head.length, 4);
  frame.writeUInt32BE(crc32(frame.subarray(0, 8)), 8);
  head.copy(frame, 12);
  payload.copy(frame, 12 + head.length);
  frame.writeUInt32BE(crc32(frame.subarray(0, total - 4)), total - 4);
  return frame;
}

const eventFrame = (type: string, body: object) =>
  eventStreamFrame(
    { ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' },
    Buffer.from(JSON.stringify(body)),
  );
const exceptionFrame = (type: string, message: string) =>
  eventStreamFrame(
    { ':exception-type': type, ':content-type': 'application/json', ':message-type': 'exception' },
    Buffer.from(JSON.stringify({ message })),
  );

// -------------------------------------------------------------------------------------------------

export interface BedrockTestServer {
  /** http://127.0.0.1:<port>: the value for BEDROCK_ENDPOINT. */
  url: string;
  requests: RecordedBedrockRequest[];
  converseRequests(): ConverseBody[];
  invokeRequests(): { modelId: string; body: any }[];
  setReply(reply: string | ((body: ConverseBody) => string)): void;
  /** The next `n` requests (of `operation`, default any) answer with this error before any byte of a reply. */
  failNext(
    n: number,
    name: keyof typeof ERROR_STATUS,
    options?: { operation?: RecordedBedrockRequest['operation'] },
  ): void;
  /** The next stream sends `afterDeltas` deltas, then an exception frame. */
  streamExceptionAfter(afterDeltas: number, exception: StreamException): void;
  /** The next stream sends `afterDeltas` deltas, then waits for the returned release(). */
  holdStreamAfter(afterDeltas: number): () => void;
  /** The next stream sends `afterDeltas` deltas, then the connection is destroyed. */
  cutStreamAfter(afterDeltas: number): void;
  /** Requests being answered right now, and the most at once since reset(). */
  inFlight: number;
  maxInFlight: number;
  reset(): void;
  close(): Promise<void>;
}

export async function startBedrockTestServer(): Promise<BedrockTestServer> {
  const requests: RecordedBedrockRequest[] = [];
  let faults: Fault[] = [];
  let reply: string | ((body: ConverseBody) => string) = (b) => `You said: ${lastUserText(b)}`;
  const releases = new Set<() => void>();

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, {
      'content-type': 'application/json',
      'x-amzn-requestid': `req-${requests.length}`,
      ...headers,
    });
    res.end(JSON.stringify(body));
  };
  const error = (res: ServerResponse, name: string, message: string) =>
    json(
      res,
      ERROR_STATUS[name] ?? 400,
      { message },
      { 'x-amzn-errortype': `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
    );

  const takeFault = (operation: RecordedBedrockRequest['operation']): Fault | undefined => {
    const i = faults.findIndex((f) =>
      f.type === 'error' ? !f.operation || f.operation === operation : operation === 'converse-stream',
    );
    return i < 0 ? undefined : faults.splice(i, 1)[0];
  };

  /** What real Bedrock checks in a Converse request (turns alternate, open with the user, no empty text). */
  function converseProblem(body: ConverseBody): string | undefined {
    if (!Array.isArray(body?.messages) || body.messages.length === 0)
      return 'A conversation must start with a user message.';
    if (body.messages[0]!.role !== 'user')
      return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
    for (let i = 1; i < body.messages.length; i++) {
      if (body.messages[i]!.role === body.messages[i - 1]!.role)
        return 'A conversation must alternate between user and assistant roles.';
    }
    const blocks = [...body.messages.flatMap((m) => m.content), ...(body.system ?? [])];
    if (blocks.some((b) => typeof b.text !== 'string' || b.text.length === 0))
      return 'The text field in the ContentBlock object is blank.';
    const max = body.inferenceConfig?.maxTokens;
    if (max !== undefined && (!Number.isInteger(max) || max < 1)) return 'maxTokens must be at least 1.';
    return undefined;
  }

  function usageOf(body: ConverseBody, deltas: string[]) {
    const input = [...(body.system ?? []), ...body.messages.flatMap((m) => m.content)].reduce(
      (n, b) => n + tokensOf(b.text ?? ''),
      0,
    );
    return { inputTokens: input, outputTokens: deltas.length, totalTokens: input + deltas.length };
  }

  async function converseStream(
    body: ConverseBody,
    res: ServerResponse,
    record: RecordedBedrockRequest,
    fault: Fault | undefined,
  ) {
    const text = typeof reply === 'function' ? reply(body) : reply;
    const deltas = splitIntoDeltas(text);
    res.writeHead(200, {
      'content-type': 'application/vnd.amazon.eventstream',
      'x-amzn-requestid': `req-${requests.length}`,
    });
    res.flushHeaders();
    // Resolves once the bytes are handed to the socket (so a cut or an exception comes after them).
    const write = (frame: Buffer) => new Promise<void>((resolve) => res.write(frame, () => resolve()));
    // Real events carry a `p` padding field (hides the payload sizes); clients must ignore it.
    await write(eventFrame('messageStart', { p: 'abcdefghij', role: 'assistant' }));
    for (let i = 0; i < deltas.length; i++) {
      if (fault && fault.type !== 'error' && i === fault.afterDeltas) {
        if (fault.type === 'cut') {
          res.socket?.destroy();
          return;
        }
        if (fault.type === 'exception') {
          res.end(exceptionFrame(fault.exception, `The model stream failed (${fault.exception})`));
          return;
        }
        await fault.release;
        if (record.clientClosedEarly) return;
      }
      if (record.clientClosedEarly) return;
      await write(eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: deltas[i] }, p: 'abc' }));
    }
    await write(eventFrame('contentBlockStop', { contentBlockIndex: 0, p: 'ab' }));
    await write(eventFrame('messageStop', { stopReason: 'end_turn', p: 'abcd' }));
    res.end(eventFrame('metadata', { usage: usageOf(body, deltas), metrics: { latencyMs: 12 }, p: 'abcdef' }));
  }

  function converse(body: ConverseBody, res: ServerResponse) {
    const text = typeof reply === 'function' ? reply(body) : reply;
    json(res, 200, {
      output: { message: { role: 'assistant', content: [{ text }] } },
      stopReason: 'end_turn',
      usage: usageOf(body, splitIntoDeltas(text)),
      metrics: { latencyMs: 10 },
    });
  }

  function invoke(modelId: string, body: any, res: ServerResponse) {
    if (modelId === 'amazon.titan-embed-text-v2:0') {
      const dimensions = body?.dimensions ?? 1024;
      if (typeof body?.inputText !== 'string' || body.inputText.length === 0)
        return error(res, 'ValidationException', 'Malformed input request: #: required key [inputText] not found');
      if (![256, 512, 1024].includes(dimensions))
        return error(
          res,
          'ValidationException',
          `Malformed input request: #/dimensions: ${dimensions} is not a valid enum value`,
        );
      if (body.inputText.length > 50_000)
        return error(res, 'ValidationException', 'Malformed input request: #/inputText: expected maxLength: 50000');
      const embedding = Array.from(lexicalEmbedding(body.inputText, dimensions));
      return json(
        res,
        200,
        { embedding, embeddingsByType: { float: embedding }, inputTextTokenCount: tokensOf(body.inputText) },
        {
          'x-amzn-bedrock-input-token-count': String(tokensOf(body.inputText)),
        },
      );
    }
    const texts = body?.texts;
    if (!Array.isArray(texts) || texts.length === 0 || !texts.every((t) => typeof t === 'string'))
      return error(res, 'ValidationException', 'Malformed input request: #: required key [texts] not found');
    if (texts.length > 96)
      return error(
        res,
        'ValidationException',
        `Malformed input request: #/texts: expected maximum item count: 96, found: ${texts.length}`,
      );
    if (texts.some((t: string) => t.length > 2048))
      return error(res, 'ValidationException', 'Malformed input request: #/texts: expected maxLength: 2048');
    if (!['search_document', 'search_query', 'classification', 'clustering'].includes(body.input_type))
      return error(res, 'ValidationException', 'Malformed input request: #: required key [input_type] not found');
    json(res, 200, {
      embeddings: texts.map((t: string) => Array.from(lexicalEmbedding(t, 1024))),
      id: `emb-${requests.length}`,
      response_type: 'embeddings_floats',
      texts,
    });
  }

  const httpServer = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const match = /^\/model\/([^/]+)\/(converse|converse-stream|invoke)$/.exec(
        new URL(req.url ?? '/', 'http://localhost').pathname,
      );
      if (req.method !== 'POST' || !match)
        return error(res, 'ResourceNotFoundException', `No route for ${req.method} ${req.url}`);
      const modelId = decodeURIComponent(match[1]!);
      const operation = match[2] as RecordedBedrockRequest['operation'];
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return error(res, 'ValidationException', 'Malformed request body');
      }
      const record: RecordedBedrockRequest = {
        operation,
        modelId,
        headers: req.headers,
        body,
        clientClosedEarly: false,
      };
      requests.push(record);
      server.inFlight++;
      server.maxInFlight = Math.max(server.maxInFlight, server.inFlight);
      res.on('close', () => {
        server.inFlight--;
        if (!res.writableFinished) record.clientClosedEarly = true;
      });

      if (!signedForBedrock(req)) return json(res, ...BEDROCK_UNSIGNED);
      const fault = takeFault(operation);
      // Some latency, so the SDK's retries and our concurrency have something to overlap.
      setTimeout(() => {
        if (fault?.type === 'error') return error(res, fault.name, `Simulated ${fault.name}`);
        if (operation === 'invoke') {
          if (!EMBEDDING_MODELS.includes(modelId))
            return error(res, 'ValidationException', 'The provided model identifier is invalid.');
          return invoke(modelId, body, res);
        }
        if (!CHAT_MODELS.includes(modelId))
          return error(res, 'ValidationException', 'The provided model identifier is invalid.');
        const problem = converseProblem(body);
        if (problem) return error(res, 'ValidationException', problem);
        if (operation === 'converse') return converse(body, res);
        converseStream(body, res, record, fault).catch(() => res.destroy());
      }, 2);
    });
  });
  const listening = await listenOnLoopback(httpServer);

  const server: BedrockTestServer = {
    url: listening.url,
    requests,
    converseRequests: () => requests.filter((r) => r.operation !== 'invoke').map((r) => r.body as ConverseBody),
    invokeRequests: () =>
      requests.filter((r) => r.operation === 'invoke').map((r) => ({ modelId: r.modelId, body: r.body })),
    setReply: (r) => {
      reply = r;
    },
    failNext(n, name, options = {}) {
      for (let i = 0; i < n; i++)
        faults.push({ type: 'error', name, ...(options.operation && { operation: options.operation }) });
    },
    streamExceptionAfter(afterDeltas, exception) {
      faults.push({ type: 'exception', afterDeltas, exception });
    },
    holdStreamAfter(afterDeltas) {
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      releases.add(release);
      faults.push({ type: 'hold', afterDeltas, release: released });
      return release;
    },
    cutStreamAfter(afterDeltas) {
      faults.push({ type: 'cut', afterDeltas });
    },
    inFlight: 0,
    maxInFlight: 0,
    reset() {
      requests.length = 0;
      faults = [];
      releaseAll(releases);
      reply = (b) => `You said: ${lastUserText(b)}`;
      server.maxInFlight = server.inFlight;
    },
    async close() {
      releaseAll(releases);
      await listening.close();
    },
  };
  return server;
}
