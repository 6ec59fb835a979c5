import '../config/chat.ts';
import '../config/chunking.ts';
import { bucketName, dynamo } from '../clients.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { FileStorage } from '../files/storage.ts';
import { retrieverOnFirstUse } from '../retrieval/retriever-on-first-use.ts';
import { searchDeps } from '../retrieval/search-deps.ts';
import type { McpDeps } from './server.ts';

/**
 * What the MCP tools work with, composed once per function instance from the configuration. The
 * S3 client and the code that reads stored files are imported on the first tool call that needs
 * them (`search`, `ask`, `read_part`): an agent's first requests (initialize, tools/list) and the
 * list tools parse none of them (docs/DECISIONS.md "MCP server").
 */
export async function mcpDeps(settings: Config, clock: Clock): Promise<McpDeps> {
  const search = await searchDeps(settings, clock, retrieverOnFirstUse(settings, dynamo()));
  let storage: Promise<FileStorage> | undefined;
  const storageOnFirstUse = async () => {
    const [{ FileStorage }, { s3Client }] = await Promise.all([
      import('../files/storage.ts'),
      import('../s3-client.ts'),
    ]);
    return new FileStorage(s3Client(), bucketName());
  };
  return {
    ...search,
    readPart: async (input) => {
      storage ??= storageOnFirstUse();
      const [{ getPartText }, files] = await Promise.all([import('../ingestion/page-service.ts'), storage]);
      return getPartText({ files: search.files, storage: files }, input);
    },
    limits: search.budget,
    settings: {
      replyMaxTokens: settings.REPLY_MAX_TOKENS,
      retrievalK: settings.RETRIEVAL_K,
      chunkTokens: settings.CHUNK_TOKENS,
    },
  };
}
