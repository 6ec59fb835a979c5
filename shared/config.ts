import { z } from 'zod';

// Every setting the functions read, parsed once per cold start. Defaults work locally;
// a bad value stops start-up with a message naming the variable (see loadConfig).

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const csv = z
  .string()
  .transform((v) => v.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean));
const optionalUrl = z.url({ protocol: /^https?$/ }).optional();

export const configSchema = z.object({
  AWS_REGION: z.string().min(1).default('us-east-1'),
  // Set by the stack (deployed) or the local runtime; an empty one is a deployment bug.
  TABLE_NAME: z.string().min(1),
  BUCKET_NAME: z.string().min(1).optional(),
  // Queue URLs are opaque to us (fauxqs answers with hosts a URL parser rejects).
  PDF_FETCH_QUEUE_URL: z.string().min(1).optional(),
  PDF_EXTRACT_QUEUE_URL: z.string().min(1).optional(),
  PDF_EMBED_QUEUE_URL: z.string().min(1).optional(),
  // Emulator endpoints; unset in AWS.
  DYNAMODB_ENDPOINT: optionalUrl,
  S3_ENDPOINT: optionalUrl,
  SQS_ENDPOINT: optionalUrl,
  SECRETS_MANAGER_ENDPOINT: optionalUrl,

  LOG_LEVEL: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT', 'debug', 'info', 'warn', 'error', 'silent']).default('INFO'),
  CORS_ALLOW_ORIGIN: z.string().min(1).default('*'),
  MAX_BODY_BYTES: int(1024, 10 * 1024 * 1024).default(256 * 1024),

  // Identity provider (POST /auth). A preset fills the three IDP_* values; explicit ones win.
  IDP_PRESET: z.enum(['custom', 'firebase', 'google', 'cognito', 'local']).optional(),
  IDP_JWKS_URL: optionalUrl,
  IDP_ISSUER: z.string().min(1).optional(),
  IDP_AUDIENCE: z.string().min(1).optional(),
  FIREBASE_PROJECT_ID: z.string().regex(/^[a-z0-9-]+$/).optional(),
  GOOGLE_CLIENT_ID: z.string().min(1).optional(),
  COGNITO_USER_POOL_ID: z.string().regex(/^[\w-]+_[0-9a-zA-Z]+$/).optional(),
  COGNITO_CLIENT_ID: z.string().min(1).optional(),

  // Service JWT: the secret from the environment, or from Secrets Manager when deployed.
  SERVICE_JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  SERVICE_JWT_SECRET_ARN: z.string().startsWith('arn:').optional(),
  SERVICE_JWT_ISSUER: z.string().min(1).default('chat-orders-pdf-service'),
  SERVICE_JWT_AUDIENCE: z.string().min(1).default('chat-orders-pdf-service-api'),
  SERVICE_JWT_TTL_SECONDS: int(60, 90 * 24 * 3600).default(30 * 24 * 3600),
  ADMIN_EMAILS: csv.default([]),

  // AI provider: OpenAI (or any compatible server) when a key is set, the offline provider otherwise.
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_API_KEY_SECRET_ARN: z.string().startsWith('arn:').optional(),
  OPENAI_BASE_URL: optionalUrl,
  OPENAI_CHAT_MODEL: z.string().min(1).default('gpt-4o-mini'),
  OPENAI_EMBEDDING_MODEL: z.string().min(1).default('text-embedding-3-small'),
  // Output size of the embeddings, sent as `dimensions` when set (text-embedding-3-* accept it).
  OPENAI_EMBEDDING_DIMENSIONS: int(1, 8192).optional(),
  OPENAI_TIMEOUT_MS: int(1000, 15 * 60 * 1000).default(60_000),
  OPENAI_MAX_RETRIES: int(0, 10).default(3),
  EMBEDDING_BATCH_SIZE: int(1, 2048).default(2048),
  EMBEDDING_BATCH_MAX_TOKENS: int(1000, 1_000_000).default(300_000),
  EMBEDDING_CONCURRENCY: int(1, 32).default(4),

  // Chat limits.
  PROMPT_MAX_CHARS: int(1, 200_000).default(16_000),
  HISTORY_TOKEN_BUDGET: int(0, 1_000_000).default(6_000),
  REPLY_MAX_TOKENS: int(16, 100_000).default(1_024),
  STREAM_HEARTBEAT_MS: int(100, 60_000).default(10_000),

  // PDF ingestion.
  PDF_MAX_BYTES: int(1024, 500 * 1024 * 1024).default(25 * 1024 * 1024),
  PDF_MAX_PAGES: int(1, 100_000).default(2_000),
  PDF_SYNC_WAIT_MS: int(0, 60_000).default(20_000),
  PDF_FETCH_TIMEOUT_MS: int(100, 15 * 60 * 1000).default(60_000),
  PDF_ALLOW_LOOPBACK: bool.default(false),
  CHUNK_TOKENS: int(50, 8_000).default(800),
  CHUNK_OVERLAP_TOKENS: int(0, 2_000).default(100),
  // A part is one embedding request filled to the provider's limits; a lower cap here buys more
  // parallel parts at the price of more (smaller) requests.
  CHUNKS_PER_PART: int(1, 10_000).default(2_048),
  // Lifetime of the presigned upload/download URLs of POST /upload.
  UPLOAD_URL_TTL_SECONDS: int(60, 7 * 24 * 3600).default(3600),
  // Where pdfjs's standard font data is (the bundle ships it as standard_fonts/ beside index.mjs).
  PDFJS_STANDARD_FONTS_DIR: z.string().min(1).optional(),
  // Packed vectors kept in memory by warm functions for retrieval.
  RETRIEVAL_CACHE_MB: int(0, 4_096).default(256),
});

export type Config = z.infer<typeof configSchema>;

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
  return parsed.data;
}

let cached: Config | undefined;

/** The configuration of this cold start. */
export function config(): Config {
  cached ??= loadConfig();
  return cached;
}
