import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import dynalite from 'dynalite';
import { startFauxqs, type FauxqsServer } from 'fauxqs';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import { createTableInput } from '../table.ts';

// The AWS APIs on one machine: DynamoDB from dynalite (LevelDB on disk, or in memory), SQS and
// S3 from fauxqs (in memory). Both listen on free loopback ports.

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
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(dataPath && { path: dataPath }) }) as Server;
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

export async function startEmulators(options: { dynamoDataPath?: string } = {}): Promise<Emulators> {
  const dynamo = await startDynalite(options.dynamoDataPath);
  const fauxqs = await startFauxqs({ port: 0, host: '127.0.0.1', logger: false, defaultRegion: LOCAL_REGION });
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
