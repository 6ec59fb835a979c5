import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { BEDROCK_UNSIGNED, signedForBedrock } from './bedrock-server.ts';
import { listenOnLoopback, releaseAll } from './loopback-server.ts';

// Loopback stand-ins for the two rerank APIs the service can call, speaking their wire formats so
// the real clients can be driven (the AWS SDK with an endpoint override; fetch):
//
// Amazon Bedrock Agent Runtime `Rerank` (POST /rerank, SigV4 for service `bedrock`):
//   { queries: [{ type: 'TEXT', textQuery: { text } }],
//     sources: [{ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text } } }],
//     rerankingConfiguration: { type: 'BEDROCK_RERANKING_MODEL',
//       bedrockRerankingConfiguration: { numberOfResults, modelConfiguration: { modelArn } } } }
//   → { results: [{ index, relevanceScore }] }; errors: a status, `x-amzn-errortype` and { message }.
//   Limits as documented: exactly 1 query, 1–1,000 sources, texts of 1–32,000 characters,
//   numberOfResults 1–1,000, a foundation-model ARN of a reranking model.
// Cohere-compatible rerank (POST /v1/rerank or /v2/rerank, Bearer key):
//   { model, query, documents: string[] (v1 also { text }), top_n } → { id, results: [{ index,
//   relevance_score }], meta }; errors: a status and { message } (400 invalid request, 401 bad
//   key, 404 unknown model, 429 rate limit). Limits: 1,000 documents, top_n ≥ 1.
//
// Both score a document by the share of the query's words it holds (lower-cased, 3+ letters), so
// a test knows the order it should get. failNext(n, …) answers errors; hold() keeps the next
// request open until released (a timeout); requests records every body.

const words = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []);

/** The stand-ins' relevance: the share of the query's words in the document (ties: earlier first). */
export function overlapScores(query: string, documents: string[]): { index: number; score: number }[] {
  const wanted = words(query);
  return documents
    .map((d, index) => {
      const has = words(d);
      const shared = [...wanted].filter((w) => has.has(w)).length;
      return { index, score: wanted.size ? shared / wanted.size : 0 };
    })
    .sort((a, b) => b.score - a.score || a.index - b.index);
}

interface RerankTestServer<Fault> {
  url: string;
  requests: { path: string; headers: http.IncomingHttpHeaders; body: any }[];
  failNext(n: number, fault: Fault): void;
  /** The next request waits until the returned function is called (or the server closes). */
  hold(): () => void;
  reset(): void;
  close(): Promise<void>;
}

async function serve<Fault>(
  handle: (req: IncomingMessage, res: ServerResponse, body: any, fault: Fault | undefined) => void,
): Promise<RerankTestServer<Fault>> {
  const requests: RerankTestServer<Fault>['requests'] = [];
  let faults: Fault[] = [];
  let holds: Promise<void>[] = [];
  const releases = new Set<() => void>();
  const httpServer = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        body = Symbol.for('invalid json');
      }
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      const held = holds.shift();
      if (held) await held;
      if (res.destroyed) return;
      handle(req, res, body, faults.shift());
    });
  });
  const listening = await listenOnLoopback(httpServer);
  return {
    url: listening.url,
    requests,
    failNext(n, fault) {
      for (let i = 0; i < n; i++) faults.push(fault);
    },
    hold() {
      let release!: () => void;
      holds.push(new Promise<void>((r) => (release = r)));
      releases.add(release);
      return release;
    },
    reset() {
      requests.length = 0;
      faults = [];
      releaseAll(releases);
      holds = [];
    },
    async close() {
      releaseAll(releases);
      await listening.close();
    },
  };
}

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

// ------------------------------------------------------------------ Bedrock Agent Runtime Rerank

export type BedrockRerankError =
  | 'ValidationException'
  | 'ThrottlingException'
  | 'AccessDeniedException'
  | 'ResourceNotFoundException'
  | 'ServiceQuotaExceededException'
  | 'InternalServerException'
  | 'DependencyFailedException'
  | 'BadGatewayException';

const BEDROCK_STATUS: Record<BedrockRerankError, number> = {
  ValidationException: 400,
  ServiceQuotaExceededException: 400,
  AccessDeniedException: 403,
  ResourceNotFoundException: 404,
  DependencyFailedException: 424,
  ThrottlingException: 429,
  InternalServerException: 500,
  BadGatewayException: 502,
};

/** Reranking models of Bedrock (what the stand-in accepts in a foundation-model ARN). */
export const BEDROCK_RERANK_MODELS = ['amazon.rerank-v1:0', 'cohere.rerank-v3-5:0'];
const MAX_TEXT = 32_000;

function bedrockProblem(body: any): [BedrockRerankError, string] | undefined {
  const invalid = (m: string): [BedrockRerankError, string] => ['ValidationException', m];
  if (!body || typeof body !== 'object') return invalid('Request body is not valid JSON');
  const { queries, sources, rerankingConfiguration: config } = body;
  if (!Array.isArray(queries) || queries.length !== 1)
    return invalid(
      "1 validation error detected: Value at 'queries' failed to satisfy constraint: Member must have length equal to 1",
    );
  const q = queries[0];
  if (
    q?.type !== 'TEXT' ||
    typeof q.textQuery?.text !== 'string' ||
    !q.textQuery.text.length ||
    q.textQuery.text.length > MAX_TEXT
  )
    return invalid(
      "Value at 'queries.1.member.textQuery.text' failed to satisfy constraint: Member must have length between 1 and 32000",
    );
  if (!Array.isArray(sources) || sources.length < 1 || sources.length > 1000)
    return invalid("Value at 'sources' failed to satisfy constraint: Member must have length between 1 and 1000");
  for (const [i, s] of sources.entries()) {
    const doc = s?.inlineDocumentSource;
    if (s?.type !== 'INLINE' || !doc) return invalid(`Value at 'sources.${i + 1}.member.type' must be INLINE`);
    if (doc.type === 'TEXT') {
      const text = doc.textDocument?.text;
      if (typeof text !== 'string' || !text.length || text.length > MAX_TEXT)
        return invalid(
          `Value at 'sources.${i + 1}.member.inlineDocumentSource.textDocument.text' failed to satisfy constraint: Member must have length between 1 and 32000`,
        );
    } else if (doc.type !== 'JSON' || doc.jsonDocument === undefined)
      return invalid(`Value at 'sources.${i + 1}.member.inlineDocumentSource.type' must be TEXT or JSON`);
  }
  if (config?.type !== 'BEDROCK_RERANKING_MODEL')
    return invalid("Value at 'rerankingConfiguration.type' must be BEDROCK_RERANKING_MODEL");
  const n = config.bedrockRerankingConfiguration?.numberOfResults;
  if (n !== undefined && (!Number.isInteger(n) || n < 1 || n > 1000))
    return invalid(
      "Value at 'rerankingConfiguration.bedrockRerankingConfiguration.numberOfResults' failed to satisfy constraint: Member must have value between 1 and 1000",
    );
  const arn = config.bedrockRerankingConfiguration?.modelConfiguration?.modelArn;
  const m =
    typeof arn === 'string' ? /^arn:aws(?:-[a-z-]+)?:bedrock:[a-z0-9-]+::foundation-model\/(.+)$/.exec(arn) : null;
  if (!m)
    return invalid(
      "Value at 'rerankingConfiguration.bedrockRerankingConfiguration.modelConfiguration.modelArn' failed to satisfy constraint: Member must satisfy regular expression pattern",
    );
  if (!BEDROCK_RERANK_MODELS.includes(m[1]!))
    return ['ResourceNotFoundException', `The model ${m[1]} is not a reranking model or is not available`];
  return undefined;
}

export type BedrockRerankTestServer = RerankTestServer<BedrockRerankError>;

export async function startBedrockRerankTestServer(): Promise<BedrockRerankTestServer> {
  return serve<BedrockRerankError>((req, res, body, fault) => {
    const error = (name: BedrockRerankError, message: string) =>
      send(
        res,
        BEDROCK_STATUS[name],
        { message },
        { 'x-amzn-errortype': `${name}:http://internal.amazon.com/coral/com.amazon.bedrock.agent.runtime/` },
      );
    if (req.method !== 'POST' || req.url !== '/rerank') return error('ResourceNotFoundException', 'Unknown operation');
    if (!signedForBedrock(req)) return send(res, ...BEDROCK_UNSIGNED);
    if (fault) return error(fault, `Simulated ${fault}`);
    const problem = bedrockProblem(body);
    if (problem) return error(...problem);
    const texts = body.sources.map((s: any) =>
      s.inlineDocumentSource.type === 'TEXT'
        ? s.inlineDocumentSource.textDocument.text
        : JSON.stringify(s.inlineDocumentSource.jsonDocument),
    );
    const n = body.rerankingConfiguration.bedrockRerankingConfiguration?.numberOfResults ?? texts.length;
    const results = overlapScores(body.queries[0].textQuery.text, texts)
      .slice(0, n)
      .map((r) => ({ index: r.index, relevanceScore: r.score }));
    send(res, 200, { results });
  });
}

// ------------------------------------------------------------------ Cohere-compatible /v1/rerank

export type CohereRerankFault = 400 | 401 | 429 | 500 | 503 | 'not-json';

export const COHERE_RERANK_MODELS = ['rerank-v3.5', 'rerank-english-v3.0', 'rerank-multilingual-v3.0'];

export type CohereRerankTestServer = RerankTestServer<CohereRerankFault> & { apiKey: string };

export async function startCohereRerankTestServer(apiKey = 'test-rerank-key'): Promise<CohereRerankTestServer> {
  const server = await serve<CohereRerankFault>((req, res, body, fault) => {
    const error = (status: number, message: string) => send(res, status, { message });
    if (req.method !== 'POST' || !/^\/v[12]\/rerank$/.test(req.url ?? ''))
      return error(404, `no route for ${req.method} ${req.url}`);
    if (req.headers.authorization !== `Bearer ${apiKey}`) return error(401, 'invalid api token');
    if (fault === 'not-json') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end('<html>gateway</html>');
    }
    if (fault === 429) return error(429, 'You are using a Trial key, which is limited to 10 API calls / minute.');
    if (fault) return error(fault, `Simulated ${fault}`);
    if (!body || typeof body !== 'object') return error(400, 'invalid request: body must be JSON');
    const { model, query, documents, top_n: topN } = body;
    if (typeof model !== 'string' || !model) return error(400, 'invalid request: model must be specified');
    if (!COHERE_RERANK_MODELS.includes(model))
      return error(404, `model '${model}' not found, make sure the correct model ID was used`);
    if (typeof query !== 'string' || !query.trim()) return error(400, 'invalid request: query must not be empty');
    if (!Array.isArray(documents) || !documents.length)
      return error(400, 'invalid request: list of documents must not be empty');
    if (documents.length > 1000) return error(400, 'invalid request: a maximum of 1000 documents are supported');
    const v2 = req.url === '/v2/rerank';
    const texts: (string | undefined)[] = documents.map((d: unknown) =>
      typeof d === 'string'
        ? d
        : !v2 && typeof (d as { text?: unknown })?.text === 'string'
          ? (d as { text: string }).text
          : undefined,
    );
    if (texts.some((t) => t === undefined)) return error(400, 'invalid request: documents must be strings');
    if (topN !== undefined && (!Number.isInteger(topN) || topN < 1))
      return error(400, 'invalid request: top_n must be a positive integer');
    const results = overlapScores(query, texts as string[])
      .slice(0, topN ?? texts.length)
      .map((r) => ({ index: r.index, relevance_score: r.score }));
    send(res, 200, {
      id: `rerank-${server.requests.length}`,
      results,
      meta: { api_version: { version: v2 ? '2' : '1' }, billed_units: { search_units: 1 } },
    });
  });
  return Object.assign(server, { apiKey });
}
