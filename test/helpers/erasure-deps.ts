import type { TestApp } from './app.ts';
import { accountExportDepsOf } from '#shared/account-export/account-export-deps.ts';
import type { AccountExportDeps } from '#shared/account-export/account-export.ts';
import { ApiKeyRepository } from '#shared/auth/api-key-repository.ts';
import { ChatRepository } from '#shared/chats/conversations/chat-repository.ts';
import { CollectionRepository } from '#shared/collections/collection-repository.ts';
import type { ErasureDeps } from '#shared/erasure/erasure.ts';
import { AttachmentRepository } from '#shared/files/attachment-repository.ts';
import { ChunkRepository } from '#shared/files/chunk-repository.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { FileStorage } from '#shared/files/storage.ts';
import { vectorStoreFor } from '#shared/retrieval/vector-store.ts';
import { StorageQuota } from '#shared/files/storage-quota.ts';
import { UsageCounters } from '#shared/limits/usage-counters.ts';
import { UsageLedger } from '#shared/limits/usage-ledger.ts';
import { OrderRepository } from '#shared/orders/order-repository.ts';
import { UserRepository } from '#shared/users/user-repository.ts';

/** What the erasure and the sweep work with, over a test app's emulators (as data-sweep composes it). */
export function erasureDeps(app: TestApp, chats?: ChatRepository): ErasureDeps {
  const { db, s3 } = app.clients();
  const table = app.tableName;
  const storage = new FileStorage(s3, app.bucket);
  const counters = new UsageCounters(db, table);
  const clock = () => new Date();
  return {
    db,
    table,
    users: new UserRepository(db, table),
    apiKeys: new ApiKeyRepository(db, table),
    chats: chats ?? new ChatRepository(db, table),
    orders: new OrderRepository(db, table),
    counters,
    uploads: {
      files: new FileRepository(db, table),
      chunks: new ChunkRepository(db, table),
      attachments: new AttachmentRepository(db, table),
      storage,
      vectors: vectorStoreFor(app.config, storage),
      quota: new StorageQuota(db, table, counters, storage, { maxBytes: app.config.USER_STORAGE_MAX_BYTES }, clock),
      usage: new UsageLedger(db, table, clock),
      s3,
      settings: {
        maxBytes: app.config.PDF_MAX_BYTES,
        urlTtlSeconds: app.config.UPLOAD_URL_TTL_SECONDS,
        partBytes: app.config.UPLOAD_PART_BYTES,
      },
      clock,
      collections: new CollectionRepository(db, table),
    },
    collections: { collections: new CollectionRepository(db, table), files: new FileRepository(db, table) },
    clock,
  };
}

/** What the account export's build works with, over a test app's emulators (as data-sweep composes it). */
export function accountExportDeps(app: TestApp): AccountExportDeps {
  const { db, s3 } = app.clients();
  return accountExportDepsOf({ db, s3, table: app.tableName, bucket: app.bucket }, () => new Date());
}
