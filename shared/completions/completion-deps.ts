import '../config/chat.ts';
import '../config/chunking.ts';
import { aiProvider } from '../ai/provider.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { dynamo, tableName } from '../clients.ts';
import { CollectionRepository } from '../collections/collection-repository.ts';
import { FileRepository } from '../files/file-repository.ts';
import { userLimits } from '../limits/user-limits.ts';
import { UsageLedger } from '../limits/usage-ledger.ts';
import { retrieverOnFirstUse } from '../retrieval/retriever-on-first-use.ts';
import type { CompletionDeps } from './completions.ts';

/** What the completions route works with, composed at its cold start (as a chat reply's, shared/chats/replies/reply-deps.ts). */
export async function completionDeps(config: Config, clock: Clock): Promise<CompletionDeps> {
  return {
    db: dynamo(),
    table: tableName(),
    files: new FileRepository(dynamo(), tableName()),
    collections: new CollectionRepository(dynamo(), tableName()),
    provider: await aiProvider(),
    retrieve: retrieverOnFirstUse(config, dynamo()),
    budget: userLimits(dynamo(), config, clock),
    usage: new UsageLedger(dynamo(), tableName(), clock),
    clock,
    settings: {
      replyMaxTokens: config.REPLY_MAX_TOKENS,
      historyTokenBudget: config.HISTORY_TOKEN_BUDGET,
      promptMaxChars: config.PROMPT_MAX_CHARS,
      retrievalK: config.RETRIEVAL_K,
      chunkTokens: config.CHUNK_TOKENS,
    },
  };
}
