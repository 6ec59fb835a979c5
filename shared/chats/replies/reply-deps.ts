import { aiProvider } from '../../ai/provider.ts';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { dynamo, tableName } from '../../clients.ts';
import { chatFilesDeps } from '../../files/chat-files.ts';
import { CollectionRepository } from '../../collections/collection-repository.ts';
import { userLimits } from '../../limits/user-limits.ts';
import { UsageLedger } from '../../limits/usage-ledger.ts';
import { retrieverOnFirstUse } from '../../retrieval/retriever-on-first-use.ts';
import { chatRepositories } from '../repositories.ts';
import { replySettings, type SendMessageDeps } from './reply-request.ts';

/**
 * What the routes that generate replies work with (a new prompt, a regenerated reply), composed
 * by each at its cold start. The retrieval of file chats is loaded on its first use.
 */
export async function replyDeps(config: Config, clock: Clock): Promise<SendMessageDeps> {
  return {
    ...chatRepositories(dynamo(), tableName()),
    provider: await aiProvider(),
    retrieve: retrieverOnFirstUse(config, dynamo()),
    budget: userLimits(dynamo(), config, clock),
    usage: new UsageLedger(dynamo(), tableName(), clock),
    files: { ...chatFilesDeps(dynamo(), tableName()), collections: new CollectionRepository(dynamo(), tableName()) },
    clock,
    settings: replySettings(config),
  };
}
