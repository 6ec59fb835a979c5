import '../config/chat.ts';
import '../config/chunking.ts';
import { bucketName, dynamo, tableName } from '../clients.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { aiProvider } from '../ai/provider.ts';
import { CollectionRepository } from '../collections/collection-repository.ts';
import { FileRepository } from '../files/file-repository.ts';
import { FileStorage } from '../files/storage.ts';
import { UsageLedger } from '../limits/usage-ledger.ts';
import { userLimits } from '../limits/user-limits.ts';
import { retrieverFor } from '../retrieval/retrieve.ts';
import { s3Client } from '../s3-client.ts';
import type { McpDeps } from './server.ts';

/** What the MCP tools work with, composed once per function instance from the configuration. */
export async function mcpDeps(settings: Config, clock: Clock): Promise<McpDeps> {
  const limits = userLimits(dynamo(), settings, clock);
  return {
    db: dynamo(),
    table: tableName(),
    retrieve: retrieverFor(settings, dynamo(), s3Client()),
    provider: await aiProvider(),
    collections: new CollectionRepository(dynamo(), tableName()),
    files: new FileRepository(dynamo(), tableName()),
    storage: new FileStorage(s3Client(), bucketName()),
    budget: limits,
    limits,
    usage: new UsageLedger(dynamo(), tableName(), clock),
    settings: {
      replyMaxTokens: settings.REPLY_MAX_TOKENS,
      retrievalK: settings.RETRIEVAL_K,
      chunkTokens: settings.CHUNK_TOKENS,
    },
  };
}
