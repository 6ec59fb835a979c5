import '../config/chat.ts';
import '../config/chunking.ts';
import { bucketName, dynamo } from '../clients.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
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
  // The page service and a storage on the S3 client, imported and made on the first read_part.
  let partReader: Promise<McpDeps['readPart']> | undefined;
  const composePartReader = async (): Promise<McpDeps['readPart']> => {
    const [{ getPartText }, { FileStorage }, { s3Client }] = await Promise.all([
      import('../ingestion/page-service.ts'),
      import('../files/storage.ts'),
      import('../s3-client.ts'),
    ]);
    const storage = new FileStorage(s3Client(), bucketName());
    return (input) => getPartText({ files: search.files, storage }, input);
  };
  return {
    ...search,
    readPart: async (input) => {
      partReader ??= composePartReader();
      return (await partReader)(input);
    },
    limits: search.budget,
    settings: {
      replyMaxTokens: settings.REPLY_MAX_TOKENS,
      retrievalK: settings.RETRIEVAL_K,
      chunkTokens: settings.CHUNK_TOKENS,
    },
  };
}
