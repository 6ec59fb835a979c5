import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SQSClient } from '@aws-sdk/client-sqs';
import { loadConfig, type Config } from '#shared/config/all.ts';
import {
  deadLetterConsumerList,
  scheduledTaskList,
  pipelineStageList,
  pipelineStages,
  queueUrlSetting,
  visibilityTimeoutSeconds,
  webhookDelivery,
  type PipelineStage,
  type PipelineStageName,
} from '../routes.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION, ensureTable, startEmulators, type Emulators } from './emulators.ts';
import { ensureBucket, ensureQueue, ensureQueues, type QueueInfo } from './queues.ts';
import { API_PREFIX, startGateway, type Gateway } from './gateway.ts';
import { devPages, LOCAL_SIGN_IN_PATH } from './dev-pages.ts';
import { startPoller, type Poller } from './poller.ts';
import { installLambdaGlobals } from './lambda-runtime.ts';
import { startFunctionInstances, type FunctionInstances } from './function-instances.ts';
import {
  LOCAL_IDP_AUDIENCE,
  LOCAL_IDP_ISSUER,
  LOCAL_IDP_JWKS_PATH,
  localJwks,
  localServiceSecret,
} from './local-idp.ts';
import { bucketCorsRule } from '../bucket.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { startS3Vectors, type S3VectorsStandIn } from './s3-vectors.ts';
import { startPaymentProvider, type PaymentProviderOptions, type PaymentProviderStandIn } from './payment-provider.ts';
import { asError } from '#shared/errors.ts';

// The whole service on one machine: emulators, table/queues/bucket, the HTTP gateway, the
// local identity provider and the SQS pollers, all built from the route manifest.

export const projectRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

export interface LocalRuntimeOptions {
  /** 0 picks a free port. */
  port: number;
  dataDir: string;
  /** Keep DynamoDB, SQS and S3 on disk under dataDir, written through (npm start); tests run in memory. */
  persist: boolean;
  /** Settings for the functions, over the local defaults (e.g. OPENAI_BASE_URL in tests). */
  env?: Record<string, string | undefined>;
  /** Use emulators that are already running (the test suite's) instead of starting new ones. */
  emulators?: { dynamodbEndpoint: string; fauxqsEndpoint: string };
  /** Prefix of table, queue and bucket names, so several runtimes can share emulators. */
  resourcePrefix?: string;
  pollers?: boolean;
  /** Host names the gateway answers to besides the loopback ones (LOCAL_ALLOWED_HOSTS). */
  extraHostNames?: readonly string[];
  /** Seconds before a failed SQS message is retried (fast in tests). */
  retryDelaySeconds?: number;
  log?: ((line: string) => void) | false;
  /** Receives the functions' own output (their JSON log lines) instead of this process's stdout (tests read it). */
  functionOutput?: (chunk: string) => void;
  /**
   * Run the payment provider's stand-in (payment-provider.ts) and point the functions at it
   * (npm start does; tests that take payments ask for it). Unset: the service takes no payments.
   */
  paymentProvider?: PaymentProviderOptions;
  /** Called once the runtime is up and before it serves traffic (e.g. to resume ingestions). */
  onReady?: (runtime: Omit<LocalRuntime, 'stop'>) => Promise<void>;
}

export interface LocalRuntime {
  url: string;
  port: number;
  config: Config;
  env: Record<string, string>;
  tableName: string;
  bucket: string;
  queues: Record<PipelineStageName, QueueInfo>;
  /** The webhook delivery queue (and its DLQ). */
  webhookQueue: QueueInfo;
  endpoints: { dynamodb: string; fauxqs: string };
  /** The emulators this runtime started (not when given `emulators`), for a look inside. */
  owned?: Emulators;
  /** The functions' isolated instances (see function-instances.ts). */
  functions: FunctionInstances;
  /** The payment provider's stand-in, when it runs. */
  paymentProvider?: PaymentProviderStandIn;
  /** The S3 Vectors stand-in, when VECTOR_STORE=s3vectors. */
  s3Vectors?: S3VectorsStandIn;
  /** Stops everything; `graceMs` lets requests and pipeline batches in flight finish first (a drain). */
  stop(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Batches of a stage run at once here: its Lambda maximum, except for a stage whose work is its own
 * CPU (`cpuBound`), which runs no more at once than the machine has cores (at least 2, so a
 * document's ranges still overlap). Eight pdf.js readers on two cores read a 2,000-page document
 * in 6.5–7.4 s, two in 4.2–5.3 s (docs/DECISIONS.md, Extraction in ranges of pages).
 */
export function localConcurrency(stage: PipelineStage, cores = availableParallelism()): number {
  return stage.cpuBound ? Math.min(stage.maxConcurrency, Math.max(2, cores)) : stage.maxConcurrency;
}

const loadedFunctions = new Map<string, Promise<unknown>>();

/**
 * Imports a function's entry into this process, once (tests and tools that call a handler
 * directly; the runtime itself runs every function in isolated instances). Memoized:
 * an `import()` per request costs a module resolution through the TypeScript loader's hooks
 * (about 1 ms a request on a busy machine, see bench/README.md), which Lambda never pays.
 */
export function loadFunction(entry: string): Promise<unknown> {
  let loaded = loadedFunctions.get(entry);
  if (!loaded) {
    loaded = import(join(projectRoot, entry)).then((mod: { handler?: unknown }) => {
      if (typeof mod.handler !== 'function') throw new Error(`${entry} does not export a handler`);
      return mod.handler;
    });
    loadedFunctions.set(entry, loaded);
    loaded.catch(() => loadedFunctions.delete(entry));
  }
  return loaded;
}

export async function startLocalRuntime(options: LocalRuntimeOptions): Promise<LocalRuntime> {
  installLambdaGlobals();
  const unlock = options.persist ? await lockDataDir(options.dataDir) : undefined;
  let owned: Emulators | undefined;
  // The local S3 answers browsers by the bucket's CORS rule with this run's CORS_ALLOW_ORIGIN.
  let corsOrigin = process.env.CORS_ALLOW_ORIGIN || '*';
  if (!options.emulators) {
    owned = await startEmulators({
      ...(options.persist && {
        dynamoDataPath: join(options.dataDir, 'dynamodb'),
        fauxqsDataPath: join(options.dataDir, 'fauxqs'),
      }),
      corsRule: () => bucketCorsRule(corsOrigin),
    });
  }
  const endpoints = {
    dynamodb: options.emulators?.dynamodbEndpoint ?? owned!.dynamodbEndpoint,
    fauxqs: options.emulators?.fauxqsEndpoint ?? owned!.fauxqsEndpoint,
  };
  const prefix = options.resourcePrefix ?? '';
  const tableName = `${prefix}chat-service`;
  const bucket = `${prefix}chat-service-files`.toLowerCase();
  let paymentProvider: PaymentProviderStandIn | undefined;
  let s3Vectors: S3VectorsStandIn | undefined;
  // VECTOR_STORE=s3vectors: the stand-in of S3 Vectors with the stack's vector bucket (kept in DATA_DIR by npm start).
  const vectorBucket = `${prefix}chat-service-vectors`.toLowerCase();
  const wantsS3Vectors = (options.env?.VECTOR_STORE ?? process.env.VECTOR_STORE) === 's3vectors';

  try {
    if (options.paymentProvider) paymentProvider = await startPaymentProvider(options.paymentProvider);
    if (wantsS3Vectors) {
      s3Vectors = await startS3Vectors(options.persist ? { dataDir: options.dataDir } : {});
      await ensureVectorBucket(s3Vectors.url, vectorBucket);
    }
    // The identity provider's key exists from the start: `npm run token` signs with it and
    // refuses a DATA_DIR without one (a key it made would be unknown to this server).
    await localJwks(options.dataDir);
    await ensureTable(endpoints.dynamodb, tableName);
    await ensureBucket(endpoints.fauxqs, bucket);
    const queues = await ensureQueues(endpoints.fauxqs, prefix, (stage) =>
      visibilityTimeoutSeconds(pipelineStages[stage]),
    );
    const webhookQueue = await ensureQueue(endpoints.fauxqs, `${prefix}${webhookDelivery.queue}`, {
      visibilityTimeoutSeconds: visibilityTimeoutSeconds(webhookDelivery),
      maxReceiveCount: webhookDelivery.maxReceiveCount,
    });

    // Every function runs in instances of its own, with the manifest's memory and timeout, and
    // the environment below (filled in once the gateway's port is known, before any request).
    const functionEnv: Record<string, string> = {};
    const functions = startFunctionInstances({
      env: functionEnv,
      ...(options.log !== false && { log: (line) => console.error(line) }),
      ...(options.functionOutput && { output: options.functionOutput }),
    });
    const gateway: Gateway = await startGateway({
      port: options.port,
      invoker: functions,
      log: options.log,
      pages: devPages({ dataDir: options.dataDir, apiPrefix: API_PREFIX }),
      extraHostNames: options.extraHostNames ?? [],
      sameOriginPaths: [LOCAL_SIGN_IN_PATH],
      extraRoutes: {
        [LOCAL_IDP_JWKS_PATH]: (_req, res) => {
          localJwks(options.dataDir).then((jwks) => {
            res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
            res.end(JSON.stringify(jwks));
          });
        },
      },
    });

    // What the stack sets on each function in AWS, pointed at this machine.
    const env: Record<string, string> = {
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      TABLE_NAME: tableName,
      BUCKET_NAME: bucket,
      DYNAMODB_ENDPOINT: endpoints.dynamodb,
      S3_ENDPOINT: endpoints.fauxqs,
      SQS_ENDPOINT: endpoints.fauxqs,
      IDP_PRESET: 'local',
      IDP_JWKS_URL: `http://127.0.0.1:${gateway.port}${LOCAL_IDP_JWKS_PATH}`,
      IDP_ISSUER: LOCAL_IDP_ISSUER,
      IDP_AUDIENCE: LOCAL_IDP_AUDIENCE,
      SERVICE_JWT_SECRET: await localServiceSecret(options.dataDir),
      PDF_ALLOW_LOOPBACK: 'true',
      // Webhook receivers on this machine (a developer's, the tests'); the stack sets false.
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_QUEUE_URL: webhookQueue.url,
      LOG_LEVEL: 'WARN',
      ...(paymentProvider && {
        PAYMENTS_API_URL: paymentProvider.url,
        PAYMENTS_SECRET_KEY: paymentProvider.secretKey,
        PAYMENTS_WEBHOOK_SECRET: paymentProvider.webhookSecret,
      }),
      ...Object.fromEntries(pipelineStageList.map((s) => [queueUrlSetting[s.name], queues[s.name].url])),
    };
    if (s3Vectors) {
      env.S3_VECTORS_ENDPOINT = s3Vectors.url;
      env.S3_VECTORS_BUCKET = vectorBucket;
    }
    for (const [k, v] of Object.entries(options.env ?? {})) {
      if (v === undefined) delete env[k];
      else env[k] = v;
    }
    // Settings the developer exported win over the local defaults, except the wiring above.
    const wiring = new Set([
      'TABLE_NAME',
      'BUCKET_NAME',
      'DYNAMODB_ENDPOINT',
      'S3_ENDPOINT',
      'SQS_ENDPOINT',
      'S3_VECTORS_ENDPOINT',
      'S3_VECTORS_BUCKET',
    ]);
    for (const [k, v] of Object.entries(env)) {
      if (wiring.has(k) || options.env?.[k] !== undefined || process.env[k] === undefined) process.env[k] = v;
    }
    const config = loadConfig(process.env);
    corsOrigin = config.CORS_ALLOW_ORIGIN;
    paymentProvider?.setWebhookUrl(`${gateway.url}/payments/webhook`);
    Object.assign(
      functionEnv,
      Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined)),
    );

    const sqs = new SQSClient({ endpoint: endpoints.fauxqs, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });

    const pollers: Poller[] = [];
    const timers: NodeJS.Timeout[] = [];
    const runtime: Omit<LocalRuntime, 'stop'> = {
      url: gateway.url,
      port: gateway.port,
      config,
      env,
      tableName,
      bucket,
      queues,
      webhookQueue,
      endpoints,
      ...(owned && { owned }),
      functions,
      ...(paymentProvider && { paymentProvider }),
      s3Vectors,
    };
    await options.onReady?.(runtime);
    if (options.pollers !== false) {
      // A crash between a record's write and its message's send leaves a run with nothing queued:
      // queue each processing run again at its stage (stages are idempotent). Loaded now, once
      // the settings are set.
      const [{ resumeStuckIngestions }, { FileRepository }, { dynamo, sqsClient }, { stageQueues }] = await Promise.all(
        [
          import('#shared/ingestion/recovery.ts'),
          import('#shared/files/file-repository.ts'),
          import('#shared/clients.ts'),
          import('#shared/ingestion/stage-queues.ts'),
        ],
      );
      await resumeStuckIngestions({
        files: new FileRepository(dynamo(), config.TABLE_NAME),
        queues: stageQueues(sqsClient(), config),
      });
      // Queued runs are not resumed above: a release sends them when a slot is free.
      const [{ releaseStuck }, { ingestQueueDeps }, { systemClock }] = await Promise.all([
        import('#shared/ingestion/ingest-queue.ts'),
        import('#shared/ingestion/pipeline-deps.ts'),
        import('#shared/clock.ts'),
      ]);
      await releaseStuck(ingestQueueDeps(config, systemClock));
      // An event source mapping: a queue feeding a function of the manifest, isolated like every function.
      const poll = (
        fn: { name: string; entry: string; batchSize: number; timeoutSeconds: number; memoryMb: number },
        queue: { url: string; arn: string },
        concurrency: number,
      ) =>
        pollers.push(
          startPoller({
            name: fn.name,
            sqs,
            queueUrl: queue.url,
            queueArn: queue.arn,
            batchSize: fn.batchSize,
            concurrency,
            timeoutSeconds: fn.timeoutSeconds,
            memoryMb: fn.memoryMb,
            ...(options.retryDelaySeconds !== undefined && { retryDelaySeconds: options.retryDelaySeconds }),
            invoker: functions,
            entry: fn.entry,
            onError: (err) => options.log !== false && console.error(`[${fn.name}]`, asError(err).message),
          }),
        );
      for (const stage of pipelineStageList) {
        // A warm instance per stage from the start, so an ingestion does not wait on three cold starts.
        functions.prewarm(stage);
        poll(stage, queues[stage.name], localConcurrency(stage));
      }
      // The scheduled tasks (the data sweep: erasures, retention), run like EventBridge would, one
      // run at a time, every SWEEP_INTERVAL_SECONDS (0: never).
      if (config.SWEEP_INTERVAL_SECONDS > 0) {
        for (const task of scheduledTaskList) {
          let running = false;
          const timer = setInterval(() => {
            if (running) return;
            running = true;
            functions
              .invoke(task, {})
              .catch((err) => options.log !== false && console.error(`[${task.name}]`, asError(err).message))
              .finally(() => (running = false));
          }, config.SWEEP_INTERVAL_SECONDS * 1000);
          timer.unref();
          timers.push(timer);
        }
      }
      // Webhook deliveries: their queue feeds the delivery function, as in the stack.
      poll(webhookDelivery, webhookQueue, webhookDelivery.maxConcurrency);
      // The dead-letter consumers, fed by every stage's DLQ as in the stack.
      for (const consumer of deadLetterConsumerList) {
        for (const stage of pipelineStageList) {
          poll(consumer, { url: queues[stage.name].dlqUrl, arn: queues[stage.name].dlqArn }, 1);
        }
      }
    }

    return {
      ...runtime,
      async stop(options = {}) {
        for (const timer of timers) clearInterval(timer);
        const graceMs = options.graceMs ?? 0;
        // A drain: no new requests or batches, while those in flight finish (up to graceMs);
        // pollers stop receiving and wait for the batches they hold.
        const drained = Promise.all([gateway.close(graceMs), ...pollers.map((p) => p.stop())]);
        if (graceMs > 0) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([drained, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
          clearTimeout(timer);
        }
        // Stopping the instances fails what they were still running: those messages are delivered again.
        await Promise.all([functions.close(), drained]);
        await paymentProvider?.close();
        await s3Vectors?.close();
        sqs.destroy();
        await owned?.stop();
        await unlock?.();
      },
    };
  } catch (err) {
    await paymentProvider?.close();
    await s3Vectors?.close();
    await owned?.stop();
    await unlock?.();
    throw err;
  }
}

/** The vector bucket the stack makes in AWS, made in the stand-in (kept across restarts: made once). */
async function ensureVectorBucket(endpoint: string, name: string): Promise<void> {
  const { S3VectorsClient, CreateVectorBucketCommand } = await import('@aws-sdk/client-s3vectors');
  const client = new S3VectorsClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  try {
    await client.send(new CreateVectorBucketCommand({ vectorBucketName: name }));
  } catch (err) {
    if ((err as { name?: string }).name !== 'ConflictException') throw err;
  } finally {
    client.destroy();
  }
}
