import { z } from 'zod';
import { chosenProvider, configSchema, loadConfig, ConfigError, type Config } from '#shared/config/all.ts';
import { identityProviderSettings } from '#shared/auth/identity-provider.ts';
import { asError } from '#shared/errors.ts';
import { manifestFunctions, pipelineStageList, type PipelineStageName } from './routes.ts';

// What the CDK app reads at synth time. Two kinds of settings:
// - stack settings (camelCase context keys: `-c retainData=false`, or cdk.json "context");
// - function settings: any variable of shared/config/all.ts except the wiring the stack sets
//   itself, under its own name (`-c ADMIN_EMAILS=a@b.c`, or exported in the shell when
//   synthesizing). Context wins over the environment. Secrets never travel this way: the
//   OpenAI key is read from Secrets Manager (`openAiKeySecret`), the JWT secret is generated.

/** Set by the stack (resource names, secrets ARNs) or meaningful only on one machine. */
const NOT_PASSED_THROUGH = new Set([
  'AWS_REGION',
  'TABLE_NAME',
  'BUCKET_NAME',
  'PDF_FETCH_QUEUE_URL',
  'PDF_EXTRACT_QUEUE_URL',
  'PDF_EMBED_QUEUE_URL',
  'DYNAMODB_ENDPOINT',
  'S3_ENDPOINT',
  'SQS_ENDPOINT',
  'SECRETS_MANAGER_ENDPOINT',
  'SERVICE_JWT_SECRET',
  'SERVICE_JWT_SECRET_ARN',
  'OPENAI_API_KEY',
  'OPENAI_API_KEY_SECRET_ARN',
  'PAYMENTS_SECRET_KEY',
  'PAYMENTS_WEBHOOK_SECRET',
  'PAYMENTS_SECRET_ARN',
  'PDF_ALLOW_LOOPBACK',
  'WEBHOOK_ALLOW_LOOPBACK',
  'S3_VECTORS_BUCKET',
  'S3_VECTORS_ENDPOINT',
]);

/** Function settings the stack passes through: every config variable not set by the stack. */
const functionSettingNames = (): string[] =>
  Object.keys(configSchema.shape).filter((name) => !NOT_PASSED_THROUGH.has(name) && !name.endsWith('_QUEUE_URL'));

const bool = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
/** The retention periods CloudWatch Logs accepts. */
const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];

const stackSettingsSchema = z.object({
  /**
   * Prefix of the stack names (<serviceName>Stateful, …Stateless, …ApiFunctions, …Workers,
   * …Monitoring) and of the functions' names (serviceFunctionName).
   */
  serviceName: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9]{0,60}$/)
    .default('ChatService'),
  /** DynamoDB deletion protection (turn off for throw-away stacks). */
  deletionProtection: bool.default(true),
  /** Keep table, bucket and secret when the stack is deleted. */
  retainData: bool.default(true),
  logRetentionDays: int(1, 3653)
    .refine((d) => LOG_RETENTION_DAYS.includes(d), `must be one of ${LOG_RETENTION_DAYS.join(', ')}`)
    .default(30),
  apiThrottleRateLimit: int(1, 10_000).default(50),
  apiThrottleBurstLimit: int(1, 5_000).default(100),
  /** The stage's throttle of each public route (no sign-in: GET /shared/{shareId}), below the API's own. */
  publicThrottleRateLimit: int(1, 10_000).default(10),
  publicThrottleBurstLimit: int(1, 5_000).default(20),
  /**
   * Days an uploaded PDF (uploads/) is kept. Ingestion needs it only while it runs (the text and
   * vectors live in the table and under vectors/), so this bounds abandoned uploads and how long
   * original documents are retained; re-ingesting an expired one takes a new upload.
   */
  uploadExpirationDays: int(1, 3650).default(7),
  /** Days after which incomplete multipart uploads are aborted. */
  incompleteMultipartUploadDays: int(1, 30).default(1),
  /** Subscribed to the alarm topic when set. */
  alarmEmail: z.email().optional(),
  /** Name or ARN of an existing Secrets Manager secret holding the OpenAI API key (plain string). */
  openAiKeySecret: z.string().min(1).optional(),
  /**
   * Name or ARN of an existing Secrets Manager secret holding the payment provider's keys, JSON
   * `{ "secretKey", "webhookSecret" }`; unset: the service takes no payments (orders carry `payment: null`).
   */
  paymentsSecret: z.string().min(1).optional(),
  /**
   * Create the account-wide role API Gateway needs to write access logs (one per account and
   * region: set false when another stack already set it).
   */
  apiGatewayCloudWatchRole: bool.default(true),
  /** 5xx answers in 5 minutes that raise the API alarm. */
  api5xxAlarmThreshold: int(1, 1_000_000).default(1),
  /**
   * Reserved concurrency of send-message, the longest-running HTTP function (a streamed reply may
   * last minutes): caps what it can cost and keeps the rest of the account's concurrency for the
   * other functions. `none` leaves it unreserved (accounts with a concurrency quota of 10 cannot
   * reserve any).
   */
  sendMessageReservedConcurrency: z.union([z.literal('none'), int(1, 10_000)]).default(20),
  /**
   * Reserved concurrency of follow-reply (GET …/stream), which may follow a reply as long as it is
   * generated: caps what the streams following replies can hold of the account (each user's are
   * limited further by FOLLOWS_MAX_IN_FLIGHT_PER_USER). `none` leaves it unreserved.
   */
  followReplyReservedConcurrency: z.union([z.literal('none'), int(1, 10_000)]).default(10),
  /**
   * X-Ray tracing: active tracing on every function and the API stage, and Powertools Tracer in
   * the functions (outgoing calls as subsegments). Off by default: loading the tracer costs every
   * cold start (bench cold-start), and traces are billed.
   */
  tracing: bool.default(false),
});

/** Context key capping a pipeline stage's concurrent batches, e.g. pdfExtractMaxConcurrency. */
export const stageConcurrencyKey = (stage: string) =>
  `${stage.replace(/-(\w)/g, (_, c: string) => c.toUpperCase())}MaxConcurrency`;
/** SQS event source mappings accept a maximum concurrency of 2 to 1000. */
const stageConcurrency = int(2, 1000);

/** An origin browsers send (`https://app.example.com`, no path), or `*`. */
const corsOrigin = z.string().refine((v) => {
  if (v === '*') return true;
  try {
    const url = new URL(v);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === v;
  } catch {
    return false;
  }
}, 'must be an origin such as https://app.example.com (scheme, host and port only) or *');

export type StackSettings = z.infer<typeof stackSettingsSchema> & {
  /** Function settings passed through to every function (validated with shared/config/all.ts). */
  functionEnv: Record<string, string>;
  /** CORS origin for the API and presigned uploads (CORS_ALLOW_ORIGIN, required). */
  corsAllowOrigin: string;
  /** Concurrent batches per pipeline stage (the manifest's, or `<stage>MaxConcurrency` context). */
  stageMaxConcurrency: Record<PipelineStageName, number>;
  /** Problems worth a synth warning (e.g. no identity provider configured). */
  warnings: string[];
  /** The AI provider the functions will use (AI_PROVIDER, else OpenAI with a key secret, else offline). */
  aiProvider: ReturnType<typeof chosenProvider>;
  /** With Bedrock: the models the functions are allowed to invoke (region unset: the stack's). */
  bedrock?: { region?: string; chatModel: string; embeddingModel: string };
  /** With RERANK_PROVIDER=bedrock: the reranking model the retrieving functions may run. */
  bedrockRerank?: { region?: string; model: string };
};

type ContextReader = (key: string) => unknown;

/** How to pass a setting, to the CDK CLI and to the npm script alike. */
const HOW_TO_PASS_SETTINGS =
  'Pass settings as CDK context: `npm run synth -- -c KEY=value -c KEY=value` (note the `--`), ' +
  '`npx cdk deploy --all -c KEY=value`, or in cdk.json\'s "context"; function settings may also be exported in the shell.';

/** Every problem found, one per line, with how to pass a setting: fixing them takes one more try, not one per problem. */
export class SettingsError extends ConfigError {
  constructor(readonly problems: string[]) {
    super(
      `The deployment settings are incomplete (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n` +
        problems.map((p) => `  - ${p}`).join('\n') +
        `\n${HOW_TO_PASS_SETTINGS}\n` +
        'For example: npm run synth -- -c IDP_PRESET=firebase -c FIREBASE_PROJECT_ID=my-project -c CORS_ALLOW_ORIGIN=https://app.example.com',
    );
    this.name = 'SettingsError';
  }
}

/**
 * A function's Lambda name, fixed so the stacks that invoke or watch it (API, monitoring) name it
 * instead of importing it (docs/DECISIONS.md "Stacks within CloudFormation's limits").
 */
export const serviceFunctionName = (serviceName: string, name: string) => `${serviceName}-${name}`;
/** Lambda's limit on a function's name. */
export const MAX_FUNCTION_NAME_LENGTH = 64;

/**
 * Reads and validates every setting. Every problem is collected before failing, so one
 * message names them all (a synth that fails on the first would take one build per problem).
 */
export function readSettings(context: ContextReader, env: NodeJS.ProcessEnv = process.env): StackSettings {
  const problems: string[] = [];
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(stackSettingsSchema.shape)) {
    const value = context(key);
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = stackSettingsSchema.safeParse(raw);
  if (!parsed.success) problems.push(...parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  else {
    const longest = manifestFunctions
      .map((f) => serviceFunctionName(parsed.data.serviceName, f.name))
      .reduce((a, b) => (b.length > a.length ? b : a), '');
    if (longest.length > MAX_FUNCTION_NAME_LENGTH)
      problems.push(
        `serviceName: too long for the function names (${longest} has ${longest.length} characters, Lambda allows ${MAX_FUNCTION_NAME_LENGTH})`,
      );
  }

  const functionEnv: Record<string, string> = {};
  for (const name of functionSettingNames()) {
    const value = context(name) ?? env[name];
    if (value !== undefined && value !== '') functionEnv[name] = String(value);
  }
  // Validate as the functions will at cold start, with the stack's own wiring filled in.
  let config: Config | undefined;
  try {
    config = loadConfig({
      TABLE_NAME: 'synth-check',
      ...(raw.openAiKeySecret !== undefined && { OPENAI_API_KEY_SECRET_ARN: 'arn:synth-check' }),
      ...(raw.paymentsSecret !== undefined && { PAYMENTS_SECRET_ARN: 'arn:synth-check' }),
      // The stack makes the vector bucket with VECTOR_STORE=s3vectors.
      S3_VECTORS_BUCKET: 'synth-check',
      ...functionEnv,
    });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(err.message);
  }

  // Safe deploy defaults: what npm start may leave open (any origin, the local identity provider)
  // a deployment must name. Without an identity provider POST /auth would fail for everyone;
  // without an origin every response would say `access-control-allow-origin: *`.
  if (config?.IDP_PRESET === 'local') {
    problems.push(
      'IDP_PRESET=local exists only under npm start; choose a real provider (firebase, cognito, google or custom)',
    );
  } else if (config) {
    try {
      identityProviderSettings(config);
    } catch (err) {
      problems.push(
        `No usable identity provider (${asError(err).message}): a deployment needs one, ` +
          'e.g. -c IDP_PRESET=firebase -c FIREBASE_PROJECT_ID=my-project',
      );
    }
  }
  const origin = functionEnv.CORS_ALLOW_ORIGIN;
  if (origin === undefined) {
    problems.push(
      'CORS_ALLOW_ORIGIN must be set for a deployment: the origin of your web app, e.g. -c CORS_ALLOW_ORIGIN=https://app.example.com',
    );
  } else {
    const originCheck = corsOrigin.safeParse(origin);
    if (!originCheck.success) problems.push(`CORS_ALLOW_ORIGIN: ${originCheck.error.issues[0]!.message}`);
  }

  const stageMaxConcurrency = {} as Record<PipelineStageName, number>;
  for (const stage of pipelineStageList) {
    const key = stageConcurrencyKey(stage.name);
    const value = context(key);
    const checked = stageConcurrency.safeParse(value === undefined || value === '' ? stage.maxConcurrency : value);
    if (checked.success) stageMaxConcurrency[stage.name] = checked.data;
    else problems.push(`${key}: ${checked.error.issues[0]!.message}`);
  }
  if (problems.length || !parsed.success || !config || origin === undefined) throw new SettingsError(problems);

  const warnings: string[] = [];
  const aiProvider = chosenProvider(config);

  if (origin === '*') warnings.push("CORS_ALLOW_ORIGIN=*: any web page may call the API with a user's token");
  if (aiProvider === 'offline') {
    warnings.push(
      'No openAiKeySecret: the functions use the offline AI provider (extractive answers, lexical embeddings)',
    );
  }
  if (!parsed.data.paymentsSecret) {
    warnings.push('No paymentsSecret: the service takes no payments (orders carry payment: null)');
  }
  if (aiProvider === 'bedrock' && parsed.data.openAiKeySecret) {
    warnings.push('AI_PROVIDER=bedrock: openAiKeySecret is ignored (no function is given the OpenAI key)');
  }
  const bedrock =
    aiProvider === 'bedrock'
      ? {
          region: config.BEDROCK_REGION,
          chatModel: config.BEDROCK_CHAT_MODEL,
          embeddingModel: config.BEDROCK_EMBEDDING_MODEL,
        }
      : undefined;

  const bedrockRerank =
    config?.RERANK_PROVIDER === 'bedrock'
      ? { region: config.BEDROCK_REGION, model: config.BEDROCK_RERANK_MODEL }
      : undefined;

  return {
    ...parsed.data,
    functionEnv,
    corsAllowOrigin: origin,
    stageMaxConcurrency,
    warnings,
    aiProvider,
    ...(bedrock && { bedrock }),
    ...(bedrockRerank && { bedrockRerank }),
  };
}
