import { ApiKeyRepository } from '../auth/api-key-repository.ts';
import { ChatRepository } from '../chats/conversations/chat-repository.ts';
import { CollectionRepository } from '../collections/collection-repository.ts';
import { FileRepository } from '../files/file-repository.ts';
import { dynamo } from '../clients.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { uploadDeps } from '../files/upload-deps.ts';
import { configuredVectorStore } from '../retrieval/vector-store.ts';
import { UsageCounters } from '../limits/usage-counters.ts';
import { OrderRepository } from '../orders/order-repository.ts';
import { UserRepository } from '../users/user-repository.ts';
import { WebhookRepository } from '../webhooks/webhook-repository.ts';
import type { ErasureDeps } from './erasure.ts';

/** What an erasure works with, composed at a cold start. */
export function erasureDeps(config: Config, clock: Clock): ErasureDeps {
  const table = config.TABLE_NAME;
  return {
    db: dynamo(),
    table,
    users: new UserRepository(dynamo(), table),
    apiKeys: new ApiKeyRepository(dynamo(), table),
    chats: new ChatRepository(dynamo(), table),
    orders: new OrderRepository(dynamo(), table),
    counters: new UsageCounters(dynamo(), table),
    uploads: {
      ...uploadDeps(config, clock, configuredVectorStore(config)),
      collections: new CollectionRepository(dynamo(), table),
    },
    collections: { collections: new CollectionRepository(dynamo(), table), files: new FileRepository(dynamo(), table) },
    webhooks: new WebhookRepository(dynamo(), table),
    clock,
  };
}
