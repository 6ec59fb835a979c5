import { mkdir } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import { Server, type IncomingMessage, type ServerResponse } from 'node:http';
import dynalite from 'dynalite';
import { startFauxqs, type FauxqsServer } from 'fauxqs';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
} from '@aws-sdk/client-dynamodb';
import { createTableInput } from '../table.ts';
import { bucketCorsRule, type BucketCorsRule } from '../bucket.ts';
import { applyBucketCors, s3Error } from './s3-cors.ts';
import { presignedRefusal } from './s3-presigned.ts';

// The AWS APIs on one machine: DynamoDB from dynalite (LevelDB), SQS and S3 from fauxqs (SQLite,
// every message and object written through as it is accepted), on disk under DATA_DIR or in
// memory. Both listen on free ports of 127.0.0.1 only: nothing on the network can reach them.

export const LOCAL_REGION = 'us-east-1';
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export interface Emulators {
  dynamodbEndpoint: string;
  fauxqs: FauxqsServer;
  fauxqsEndpoint: string;
  stop(): Promise<void>;
}

export async function startDynalite(dataPath?: string): Promise<{ endpoint: string; stop(): Promise<void> }> {
  if (dataPath) await mkdir(dataPath, { recursive: true });
  const server = dynalite({
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
    ...(dataPath && { path: dataPath }),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}

interface EmulatorOptions {
  /** dynalite's LevelDB directory; in memory when unset. */
  dynamoDataPath?: string;
  /** fauxqs's SQLite directory (queues, messages, buckets, objects); in memory when unset. */
  fauxqsDataPath?: string;
  /** The bucket CORS rule the local S3 answers browsers by; the deployed default when unset. */
  corsRule?: () => BucketCorsRule;
}

/**
 * fauxqs 2.4 listens on 0.0.0.0 whatever its options say (`host` only names queue URLs) and
 * implements no bucket CORS. Its HTTP server is caught as it starts listening: bound to
 * 127.0.0.1 instead, and its request handler put behind the bucket's CORS rule.
 */
async function startFauxqsOnLoopback(
  dataDir: string | undefined,
  corsRule: () => BucketCorsRule,
): Promise<FauxqsServer> {
  const listen = net.Server.prototype.listen;
  let caught: Server | undefined;
  net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
    const [first] = args as [{ host?: string } | undefined];
    if (
      !caught &&
      this instanceof Server &&
      first &&
      typeof first === 'object' &&
      (first.host === '0.0.0.0' || first.host === '::')
    ) {
      caught = this;
      args[0] = { ...first, host: '127.0.0.1' };
      const handlers = this.listeners('request') as ((...a: unknown[]) => void)[];
      this.removeAllListeners('request');
      this.on('request', (req: IncomingMessage, res: ServerResponse) => {
        if (applyBucketCors(corsRule(), req, res)) return;
        const refusal = presignedRefusal(req, LOCAL_CREDENTIALS);
        if (refusal) {
          req.resume(); // the body is not stored
          return s3Error(res, refusal.status, refusal.code, refusal.message);
        }
        for (const handler of handlers) handler.call(this, req, res);
      });
    }
    return (listen as (...a: unknown[]) => net.Server).apply(this, args);
  } as typeof listen;
  let fauxqs: FauxqsServer;
  try {
    if (dataDir) await mkdir(dataDir, { recursive: true });
    fauxqs = await startFauxqs({
      port: 0,
      host: '127.0.0.1',
      logger: false,
      defaultRegion: LOCAL_REGION,
      ...(dataDir && { dataDir }),
    });
  } finally {
    net.Server.prototype.listen = listen;
  }
  const address = caught?.address() as AddressInfo | null | undefined;
  if (address?.address !== '127.0.0.1') {
    await fauxqs.stop();
    throw new Error(`fauxqs did not listen on 127.0.0.1 (${fauxqs.address}); see infra/local/emulators.ts`);
  }
  return fauxqs;
}

export async function startEmulators(options: EmulatorOptions = {}): Promise<Emulators> {
  const dynamo = await startDynalite(options.dynamoDataPath);
  const corsRule = options.corsRule ?? (() => bucketCorsRule('*'));
  let fauxqs: FauxqsServer;
  try {
    fauxqs = await startFauxqsOnLoopback(options.fauxqsDataPath, corsRule);
  } catch (err) {
    await dynamo.stop();
    throw err;
  }
  return {
    dynamodbEndpoint: dynamo.endpoint,
    fauxqs,
    fauxqsEndpoint: `http://127.0.0.1:${fauxqs.port}`,
    async stop() {
      await Promise.allSettled([dynamo.stop(), fauxqs.stop()]);
    },
  };
}

/** Creates the table unless it exists (kept across restarts in DATA_DIR). */
export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  try {
    await client.send(new CreateTableCommand(createTableInput(tableName)));
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
  }
  for (let i = 0; i < 50; i++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  client.destroy();
}
