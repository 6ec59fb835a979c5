import * as z from './zod.ts';

// Every setting the functions read, parsed once per cold start. Defaults work locally;
// a bad value stops start-up with a message naming the variable (see loadConfig).

const bool = z.pipe(
  z.enum(['true', 'false', '1', '0', 'yes', 'no']),
  z.transform((v) => v === 'true' || v === '1' || v === 'yes'),
);
const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().check(z.int(), z.gte(min), z.lte(max));
const csv = z.pipe(
  z.string(),
  z.transform((v) =>
    v
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  ),
);
const optionalUrl = z.optional(z.url({ protocol: /^https?$/ }));
const str = () => z.string().check(z.minLength(1));

export const configSchema = z.object({
  AWS_REGION: z._default(str(), 'us-east-1'),
  // Set by the stack (deployed) or the local runtime; an empty one is a deployment bug.
  TABLE_NAME: str(),
  BUCKET_NAME: z.optional(str()),
  // Queue URLs are opaque to us (fauxqs answers with hosts a URL parser rejects).
  PDF_FETCH_QUEUE_URL: z.optional(str()),
  PDF_EXTRACT_QUEUE_URL: z.optional(str()),
  PDF_EMBED_QUEUE_URL: z.optional(str()),
  PDF_OCR_QUEUE_URL: z.optional(str()),
  // Emulator endpoints; unset in AWS.
  DYNAMODB_ENDPOINT: optionalUrl,
  S3_ENDPOINT: optionalUrl,
  SQS_ENDPOINT: optionalUrl,
  SECRETS_MANAGER_ENDPOINT: optionalUrl,

  LOG_LEVEL: z._default(
    z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT', 'debug', 'info', 'warn', 'error', 'silent']),
    'INFO',
  ),
  CORS_ALLOW_ORIGIN: z._default(str(), '*'),
  MAX_BODY_BYTES: z._default(int(1024, 10 * 1024 * 1024), 256 * 1024),

  // Identity provider (POST /auth). A preset fills the three IDP_* values; explicit ones win.
  IDP_PRESET: z.optional(z.enum(['custom', 'firebase', 'google', 'cognito', 'local'])),
  IDP_JWKS_URL: optionalUrl,
  IDP_ISSUER: z.optional(str()),
  IDP_AUDIENCE: z.optional(str()),
  FIREBASE_PROJECT_ID: z.optional(z.string().check(z.regex(/^[a-z0-9-]+$/))),
  GOOGLE_CLIENT_ID: z.optional(str()),
  COGNITO_USER_POOL_ID: z.optional(z.string().check(z.regex(/^[\w-]+_[0-9a-zA-Z]+$/))),
  COGNITO_CLIENT_ID: z.optional(str()),

  // Service JWT: the secret from the environment, or from Secrets Manager when deployed.
  SERVICE_JWT_SECRET: z.optional(z.string().check(z.minLength(32, 'must be at least 32 characters'))),
  SERVICE_JWT_SECRET_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  SERVICE_JWT_ISSUER: z._default(str(), 'chat-orders-pdf-service'),
  SERVICE_JWT_AUDIENCE: z._default(str(), 'chat-orders-pdf-service-api'),
  SERVICE_JWT_TTL_SECONDS: z._default(int(60, 90 * 24 * 3600), 30 * 24 * 3600),
  ADMIN_EMAILS: z._default(csv, []),

  // AI provider: `openai`, `bedrock` or `offline`; unset: OpenAI (or any compatible server) when
  // a key is set, the offline provider otherwise.
  AI_PROVIDER: z.optional(z.enum(['openai', 'bedrock', 'offline'])),
  OPENAI_API_KEY: z.optional(str()),
  OPENAI_API_KEY_SECRET_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  OPENAI_BASE_URL: optionalUrl,
  OPENAI_CHAT_MODEL: z._default(str(), 'gpt-4o-mini'),
  OPENAI_EMBEDDING_MODEL: z._default(str(), 'text-embedding-3-small'),
  // Output size of the embeddings, sent as `dimensions` when set (text-embedding-3-* accept it).
  OPENAI_EMBEDDING_DIMENSIONS: z.optional(int(1, 8192)),
  OPENAI_TIMEOUT_MS: z._default(int(1000, 15 * 60 * 1000), 60_000),
  OPENAI_MAX_RETRIES: z._default(int(0, 10), 3),
  // Amazon Bedrock (AI_PROVIDER=bedrock), through the function's IAM role. A model id or an
  // inference profile (id or ARN) for chat; Titan Text Embeddings V2 or Cohere Embed v3 for embeddings.
  BEDROCK_REGION: z.optional(
    z.string().check(z.regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS region such as us-east-1')),
  ),
  // Endpoint override (tests, VPC endpoints); unset: the region's public endpoint.
  BEDROCK_ENDPOINT: optionalUrl,
  BEDROCK_CHAT_MODEL: z._default(str(), 'amazon.nova-lite-v1:0'),
  BEDROCK_EMBEDDING_MODEL: z._default(
    z.enum(['amazon.titan-embed-text-v2:0', 'cohere.embed-english-v3', 'cohere.embed-multilingual-v3']),
    'amazon.titan-embed-text-v2:0',
  ),
  // Titan Text Embeddings V2 only (Cohere Embed v3 is always 1024).
  BEDROCK_EMBEDDING_DIMENSIONS: z.optional(z.pipe(z.enum(['256', '512', '1024']), z.transform(Number))),
  // Titan V2 embeds one text per request: this many requests at once per embed call.
  BEDROCK_EMBEDDING_CONCURRENCY: z._default(int(1, 64), 8),
  BEDROCK_TIMEOUT_MS: z._default(int(1000, 15 * 60 * 1000), 60_000),
  // Attempts after the first (throttling, 5xx, timeouts), with the SDK's backoff.
  BEDROCK_MAX_RETRIES: z._default(int(0, 10), 3),
  EMBEDDING_BATCH_SIZE: z._default(int(1, 2048), 2048),
  EMBEDDING_BATCH_MAX_TOKENS: z._default(int(1000, 1_000_000), 300_000),
  EMBEDDING_CONCURRENCY: z._default(int(1, 32), 4),

  // Payments (the provider's API; unset: the provider's own, shared/payments/providers.ts): the
  // secret key and webhook secret from the environment (npm start sets them from
  // DATA_DIR/local-payments.json), or from Secrets Manager when deployed (a JSON secret
  // { "secretKey", "webhookSecret" }). None of them: orders carry `payment: null`.
  PAYMENTS_API_URL: z.optional(z.url({ protocol: /^https?$/ })),
  PAYMENTS_SECRET_KEY: z.optional(str()),
  PAYMENTS_WEBHOOK_SECRET: z.optional(str()),
  PAYMENTS_SECRET_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  PAYMENTS_TIMEOUT_MS: z._default(int(500, 60_000), 10_000),

  // Chat limits.
  PROMPT_MAX_CHARS: z._default(int(1, 200_000), 16_000),
  HISTORY_TOKEN_BUDGET: z._default(int(0, 1_000_000), 6_000),
  REPLY_MAX_TOKENS: z._default(int(16, 100_000), 1_024),
  STREAM_HEARTBEAT_MS: z._default(int(100, 60_000), 10_000),
  /** The offline provider's pause between streamed words (a readable pace; 0: none). */
  OFFLINE_STREAM_DELAY_MS: z._default(int(0, 1_000), 30),
  /** A streamed reply whose generator has not written for this long is taken for dead (failed). */
  REPLY_STALE_MS: z._default(int(1_500, 3_600_000), 30_000),

  // Per-user limits (shared/limits/), across all instances; 0 turns one off.
  RATE_LIMIT_MESSAGES_PER_MINUTE: z._default(int(0, 100_000), 20),
  RATE_LIMIT_INGESTIONS_PER_MINUTE: z._default(int(0, 100_000), 10),
  RATE_LIMIT_UPLOADS_PER_MINUTE: z._default(int(0, 100_000), 20),
  // GET /message/pdf/{fileId}/pages/{page} per user (a first request draws the page).
  RATE_LIMIT_PAGES_PER_MINUTE: z._default(int(0, 100_000), 60),
  // Reads of shared chats (GET /shared/{shareId}, no sign-in) per source IP.
  RATE_LIMIT_SHARED_READS_PER_MINUTE: z._default(int(0, 100_000), 60),
  DAILY_TOKEN_BUDGET: z._default(int(0, 1_000_000_000_000), 1_000_000),
  // Replies (whole or streamed) one user may have in flight at once; one more answers 429.
  REPLIES_MAX_IN_FLIGHT_PER_USER: z._default(int(0, 10_000), 4),
  // Streams following replies (GET …/stream): per user per minute, open at once per user and per
  // reply; one more answers 429 (docs/DECISIONS.md "Followers of a reply").
  RATE_LIMIT_FOLLOWS_PER_MINUTE: z._default(int(0, 100_000), 60),
  FOLLOWS_MAX_IN_FLIGHT_PER_USER: z._default(int(0, 10_000), 4),
  REPLY_MAX_FOLLOWERS: z._default(int(0, 10_000), 2),

  // PDF ingestion.
  PDF_MAX_BYTES: z._default(int(1024, 500 * 1024 * 1024), 25 * 1024 * 1024),
  PDF_MAX_PAGES: z._default(int(1, 100_000), 2_000),
  // A document longer than this is read in ranges of this many pages, each its own pdf-extract
  // message (a multiple of 32: the blocks page texts are kept in).
  PDF_EXTRACT_PAGES_PER_RANGE: z._default(int(32, 100_000).check(z.multipleOf(32)), 256),
  PDF_SYNC_WAIT_MS: z._default(int(0, 60_000), 20_000),
  PDF_FETCH_TIMEOUT_MS: z._default(int(100, 15 * 60 * 1000), 60_000),
  // The size check's deadline (one small request, made while the client waits; at most
  // PDF_FETCH_TIMEOUT_MS).
  PDF_PROBE_TIMEOUT_MS: z._default(int(100, 20_000), 5_000),
  PDF_ALLOW_LOOPBACK: z._default(bool, false),
  // Fair downloads: a download slower than the floor (bytes/s, 0 = none) over a whole
  // window is cut; one user holds at most this many ingestions in flight (more get 429).
  PDF_FETCH_MIN_BYTES_PER_SECOND: z._default(int(0, 1024 * 1024 * 1024), 16 * 1024),
  PDF_FETCH_SLOW_WINDOW_MS: z._default(int(100, 15 * 60 * 1000), 5_000),
  PDF_MAX_IN_FLIGHT_PER_USER: z._default(int(1, 10_000), 3),
  // Ingestions beyond those in flight wait in the user's queue, up to this many (then 429; 0: no
  // queue, every one beyond is 429). The upload and ingestion rates allow a burst of this many
  // plus those in flight at once (docs/DECISIONS.md "Fair bulk ingestion").
  PDF_MAX_QUEUED_PER_USER: z._default(int(0, 10_000), 100),
  // Bounds on reading one document (shared/pdf/bounded-extract.ts): the extraction
  // child's heap and resident size in MB (by default half and 70% of the function's memory),
  // time per page and per document, and the streams and CMaps it may expand to.
  PDF_EXTRACT_HEAP_MB: z.optional(int(32, 16_384)),
  PDF_EXTRACT_RSS_MB: z.optional(int(64, 16_384)),
  PDF_EXTRACT_PAGE_MS: z._default(int(100, 15 * 60 * 1000), 10_000),
  PDF_EXTRACT_DOCUMENT_MS: z._default(int(1000, 15 * 60 * 1000), 120_000),
  PDF_MAX_STREAM_BYTES: z._default(int(1024, 4 * 1024 * 1024 * 1024), 32 * 1024 * 1024),
  PDF_MAX_CONTENT_BYTES: z._default(int(1024, 16 * 1024 * 1024 * 1024), 256 * 1024 * 1024),
  PDF_MAX_CMAP_CODES: z._default(int(256, 2 ** 32), 1024 * 1024),
  // Bounds on reading a document of another format (shared/readers/): a package's entries, the
  // bytes it may inflate to and its ratio per entry (checked before inflating), markup's nesting,
  // a workbook's cells; the child's heap, size and time are the PDF_EXTRACT_* ones.
  DOCUMENT_MAX_ENTRIES: z._default(int(10, 1_000_000), 10_000),
  DOCUMENT_MAX_UNCOMPRESSED_BYTES: z._default(int(1024 * 1024, 16 * 1024 * 1024 * 1024), 512 * 1024 * 1024),
  DOCUMENT_MAX_RATIO: z._default(int(10, 100_000), 200),
  DOCUMENT_MAX_DEPTH: z._default(int(16, 100_000), 512),
  DOCUMENT_MAX_CELLS: z._default(int(1000, 100_000_000), 2_000_000),
  CHUNK_TOKENS: z._default(int(50, 8_000), 800),
  CHUNK_OVERLAP_TOKENS: z._default(int(0, 2_000), 100),
  // A part is one embedding request filled to the provider's limits; a lower cap here buys more
  // parallel parts at the price of more (smaller) requests.
  CHUNKS_PER_PART: z._default(int(1, 10_000), 2_048),
  // Lifetime of the presigned upload/download URLs of POST /upload.
  UPLOAD_URL_TTL_SECONDS: z._default(int(60, 7 * 24 * 3600), 3600),
  // The part size POST /upload/multipart cuts a PDF into (S3: at least 5 MiB but the last part,
  // at most 10,000 parts).
  UPLOAD_PART_BYTES: z._default(int(5 * 1024 * 1024, 5 * 1024 * 1024 * 1024), 16 * 1024 * 1024),
  // What one user's uploads may hold in the bucket, in bytes (shared/files/storage-quota.ts; 0: no limit).
  USER_STORAGE_MAX_BYTES: z._default(int(0, 2 ** 50), 1024 * 1024 * 1024),
  // Days chats (with their messages) and files are kept after they were created; 0: until deleted.
  // The sweep (shared/erasure/retention.ts) deletes what is older (docs/DECISIONS.md "Erasure and retention").
  RETENTION_DAYS: z._default(int(0, 36_500), 0),
  // Seconds between two runs of the sweep under `npm start` (deployed: a schedule); 0: never.
  SWEEP_INTERVAL_SECONDS: z._default(int(0, 86_400), 60),
  // Where pdfjs's standard font data is (the bundle ships it as standard_fonts/ beside index.mjs).
  PDFJS_STANDARD_FONTS_DIR: z.optional(str()),
  // OCR of pages without usable text (scans, fonts without a Unicode map): tesseract.js with the
  // trained data of @tesseract.js-data/<lang> for each language ("eng", "eng+deu"), pages drawn at
  // OCR_DPI, at most OCR_MAX_PAGES pages per document (the rest are reported unreadable), sent to
  // pdf-ocr in messages of OCR_PAGES_PER_MESSAGE pages, recognised by OCR_WORKERS threads each.
  OCR_ENABLED: z._default(bool, true),
  OCR_MAX_PAGES: z._default(int(0, 100_000), 200),
  OCR_LANGUAGES: z._default(
    z.pipe(
      z
        .string()
        .check(
          z.regex(/^[a-z_]{3,10}(\+[a-z_]{3,10})*$/, 'must be tesseract language codes joined by +, e.g. eng+deu'),
        ),
      z.transform((v) => v.split('+')),
    ),
    ['eng'],
  ),
  OCR_DPI: z._default(int(72, 400), 150),
  OCR_PAGES_PER_MESSAGE: z._default(int(1, 100), 8),
  OCR_WORKERS: z.optional(int(1, 16)),
  // Bounds on drawing pages (shared/pdf/ocr/bounded-render.ts): the drawing child's time per page.
  // Its heap and resident size follow the function's memory, and so does the largest image a page
  // may hold (a costlier one leaves that page unreadable, checked before decoding); OCR_MAX_IMAGE_PIXELS
  // lowers that to a number of pixels when set.
  OCR_PAGE_MS: z._default(int(100, 15 * 60 * 1000), 20_000),
  OCR_MAX_IMAGE_PIXELS: z.optional(int(1, 2 ** 32)),
  // Resolution of the page images GET /message/pdf/{fileId}/pages/{page} draws (same bounds as OCR's drawing).
  PAGE_IMAGE_DPI: z._default(int(36, 300), 110),
  // Where pdfjs's CMaps are (the bundle ships them as cmaps/ beside index.mjs).
  PDFJS_CMAPS_DIR: z.optional(str()),
  // Packed vectors kept in memory by warm functions for retrieval.
  RETRIEVAL_CACHE_MB: z._default(int(0, 4_096), 256),
  // Sharing (POST /chat/{chatId}/share): the largest snapshot (its JSON, bytes); the public read
  // answers it whole in one buffered response, which Lambda caps at 6 MB after escaping it again.
  SHARE_MAX_BYTES: z._default(int(1024, 2 * 1024 * 1024), 2 * 1024 * 1024),
  // The base of the share links (`<base>/shared/<shareId>`), e.g. a custom domain's
  // https://api.example.com/api/v1; unset: the API's own URL, from the request.
  PUBLIC_BASE_URL: optionalUrl,
  // Passages retrieved for a prompt in a file chat (the sources a reply is given and may cite).
  RETRIEVAL_K: z._default(int(1, 50), 6),
  // hybrid: dense and BM25 rankings fused (RRF); dense or lexical alone, to measure each.
  RETRIEVAL_MODE: z._default(z.enum(['hybrid', 'dense', 'lexical']), 'hybrid'),
  // The rerank stage after hybrid retrieval (docs/DECISIONS.md "Reranking"): offline (the lexical
  // index's phrase, proximity, heading and rare-word evidence; the default), bedrock (Amazon
  // Bedrock's Rerank API through the function's role), cohere (any Cohere-compatible /v1/rerank
  // API: Cohere, Jina, Voyage, self-hosted) or none (the retrieval order). A failure or a timeout
  // keeps the retrieval order; it is logged, never an error to the user.
  RERANK_PROVIDER: z._default(z.enum(['offline', 'bedrock', 'cohere', 'none']), 'offline'),
  // Passages of the fused ranking given to the reranker (it keeps the best RETRIEVAL_K of them).
  RERANK_CANDIDATES: z._default(int(1, 100), 32),
  // The whole rerank call's deadline; past it the retrieval order is kept.
  RERANK_TIMEOUT_MS: z._default(int(50, 60_000), 2_000),
  // Bedrock: the reranking model (id or foundation-model ARN); its region is BEDROCK_REGION.
  BEDROCK_RERANK_MODEL: z._default(str(), 'amazon.rerank-v1:0'),
  // Endpoint override of bedrock-agent-runtime (tests, VPC endpoints); unset: the region's.
  BEDROCK_AGENT_ENDPOINT: optionalUrl,
  // Cohere-compatible: the API's base URL (…/v1/rerank is appended unless the URL ends in /rerank),
  // its model and key.
  RERANK_URL: optionalUrl,
  RERANK_MODEL: z._default(str(), 'rerank-v3.5'),
  RERANK_API_KEY: z.optional(str()),
  // Collections (shared/collections/): the longest name, how many one user may have, and how many
  // files one may hold (docs/DECISIONS.md "Collections").
  COLLECTION_NAME_MAX_CHARS: z._default(int(1, 1_000), 120),
  COLLECTIONS_MAX_PER_USER: z._default(int(1, 100_000), 100),
  COLLECTION_MAX_FILES: z._default(int(1, 10_000), 1_000),
  // Where a file's vectors are searched (docs/DECISIONS.md "Vector store: two backends"): packs,
  // one S3 object per file loaded by the function (the default); s3vectors, Amazon S3 Vectors
  // (one index per user and embedding model in S3_VECTORS_BUCKET) for large libraries.
  VECTOR_STORE: z._default(z.enum(['packs', 's3vectors']), 'packs'),
  S3_VECTORS_BUCKET: z.optional(z.string().check(z.regex(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/))),
  // The S3 Vectors stand-in's endpoint (npm start, tests); unset in AWS.
  S3_VECTORS_ENDPOINT: optionalUrl,

  // API keys (shared/auth/api-keys.ts): the most one user may hold at once.
  API_KEYS_MAX_PER_USER: z._default(int(1, 1_000), 25),
  // --- Webhooks (shared/webhooks/, docs/DECISIONS.md "Webhooks").
  // The delivery queue (set by the stack and the local runtime, as the pipeline's).
  WEBHOOK_QUEUE_URL: z.optional(str()),
  // Seconds between a failed delivery and each next attempt, in order; after the last, the
  // delivery is recorded failed (the default spans a little over a day).
  WEBHOOK_RETRY_DELAYS_S: z._default(
    z.pipe(
      z.string().check(z.regex(/^\s*\d{1,6}(\s*,\s*\d{1,6}){0,19}\s*$/, 'Must be 1 to 20 comma-separated seconds')),
      z.transform((v) => v.split(',').map((n) => Number(n.trim()))),
    ),
    [5, 300, 1800, 7200, 18000, 36000, 36000],
  ),
  // One attempt's deadline (connect, send, answer), under the delivery function's timeout.
  WEBHOOK_TIMEOUT_MS: z._default(int(100, 20_000), 10_000),
  WEBHOOKS_MAX_PER_USER: z._default(int(1, 1_000), 10),
  // Loopback receivers (the local runtime and tests only; the stack sets false), as PDF_ALLOW_LOOPBACK.
  WEBHOOK_ALLOW_LOOPBACK: z._default(bool, false),
  // --- end webhooks
});

export type Config = z.infer<typeof configSchema>;

/**
 * The AI provider a function with this configuration uses: AI_PROVIDER, else OpenAI when a key
 * is configured (OPENAI_API_KEY, or OPENAI_API_KEY_SECRET_ARN when deployed), else offline.
 */
export function chosenProvider(settings: Config): NonNullable<Config['AI_PROVIDER']> {
  if (settings.AI_PROVIDER) return settings.AI_PROVIDER;
  return settings.OPENAI_API_KEY || settings.OPENAI_API_KEY_SECRET_ARN ? 'openai' : 'offline';
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses an environment; throws one ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings mean "unset" (CloudFormation and shells both produce them).
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const conflicts = conflictsOf(parsed.data);
  if (conflicts.length) throw new ConfigError(`Invalid configuration:\n  ${conflicts.join('\n  ')}`);
  return parsed.data;
}

/** Settings that are valid alone but not together. */
function conflictsOf(settings: Config): string[] {
  const out: string[] = [];
  if (settings.AI_PROVIDER === 'openai' && !settings.OPENAI_API_KEY && !settings.OPENAI_API_KEY_SECRET_ARN) {
    out.push('AI_PROVIDER: openai needs OPENAI_API_KEY (or OPENAI_API_KEY_SECRET_ARN)');
  }
  if (settings.PAYMENTS_SECRET_KEY && !settings.PAYMENTS_WEBHOOK_SECRET) {
    out.push('PAYMENTS_SECRET_KEY: needs PAYMENTS_WEBHOOK_SECRET too (both, or neither)');
  }
  if (settings.PAYMENTS_WEBHOOK_SECRET && !settings.PAYMENTS_SECRET_KEY) {
    out.push('PAYMENTS_WEBHOOK_SECRET: needs PAYMENTS_SECRET_KEY too (both, or neither)');
  }
  if (
    settings.BEDROCK_EMBEDDING_DIMENSIONS &&
    settings.BEDROCK_EMBEDDING_DIMENSIONS !== 1024 &&
    settings.BEDROCK_EMBEDDING_MODEL.startsWith('cohere.')
  ) {
    out.push(`BEDROCK_EMBEDDING_DIMENSIONS: ${settings.BEDROCK_EMBEDDING_MODEL} always returns 1024 dimensions`);
  }
  if (settings.RERANK_PROVIDER === 'cohere' && !settings.RERANK_URL) {
    out.push('RERANK_PROVIDER: cohere needs RERANK_URL (the Cohere-compatible API, e.g. https://api.cohere.com)');
  }
  if (settings.VECTOR_STORE === 's3vectors' && !settings.S3_VECTORS_BUCKET) {
    out.push('VECTOR_STORE: s3vectors needs S3_VECTORS_BUCKET (the vector bucket)');
  }
  return out;
}

let cached: Config | undefined;

/** The configuration of this cold start. */
export function config(): Config {
  cached ??= loadConfig();
  return cached;
}
