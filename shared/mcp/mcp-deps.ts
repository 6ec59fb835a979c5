import '../config/chat.ts';
import '../config/chunking.ts';
import { bucketName } from '../clients.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { FileStorage } from '../files/storage.ts';
import { searchDeps } from '../retrieval/search-deps.ts';
import { s3Client } from '../s3-client.ts';
import type { McpDeps } from './server.ts';

/** What the MCP tools work with, composed once per function instance from the configuration. */
export async function mcpDeps(settings: Config, clock: Clock): Promise<McpDeps> {
  const search = await searchDeps(settings, clock);
  return {
    ...search,
    storage: new FileStorage(s3Client(), bucketName()),
    limits: search.budget,
    settings: {
      replyMaxTokens: settings.REPLY_MAX_TOKENS,
      retrievalK: settings.RETRIEVAL_K,
      chunkTokens: settings.CHUNK_TOKENS,
    },
  };
}
