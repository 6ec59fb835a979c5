import type { WebhookRepository } from '../webhooks/webhook-repository.ts';
import { createHash } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ApiKeyRepository } from '../auth/api-key-repository.ts';
import type { ChatRepository } from '../chats/conversations/chat-repository.ts';
import { isoNow, type Clock } from '../clock.ts';
import { deleteCollection, type CollectionDeps } from '../collections/collection-service.ts';
import { NotFoundError } from '../errors.ts';
import { userExportsPrefix, userUploadsPrefix } from '../files/storage.ts';
import { deleteUpload, type UploadDeps } from '../files/upload-service.ts';
import type { UsageCounters } from '../limits/usage-counters.ts';
import type { OrderRepository } from '../orders/order-repository.ts';
import { userListIds } from '../user-index.ts';
import type { ErasingUser, UserRepository } from '../users/user-repository.ts';

// DELETE /me and its completion (docs/DECISIONS.md "Erasure and retention"). The erasure is a
// job whose record is the profile itself: marked `erasing` first (every token of the user is
// refused from then on), deleted last (the job is done). Every step between is idempotent, so
// an erasure cut short (a timeout, a crash) is finished by running it again: by the sweep
// (resumeErasures), which finds the marked profiles through a sparse index.

export interface ErasureDeps {
  db: DynamoDBDocumentClient;
  table: string;
  users: UserRepository;
  apiKeys: ApiKeyRepository;
  chats: ChatRepository;
  orders: OrderRepository;
  counters: UsageCounters;
  uploads: UploadDeps;
  collections: Pick<CollectionDeps, 'collections' | 'files'>;
  /** The user's webhook endpoints and their delivery logs; absent: none to erase. */
  webhooks?: Pick<WebhookRepository, 'listEndpoints' | 'deleteEndpoint'>;
  clock: Clock;
}

/** The opaque owner an erased user's orders keep: stable for the user, and not their id. */
export const tombstoneUserId = (userId: string) =>
  `deleted-${createHash('sha256').update(`erased-user:${userId}`).digest('hex').slice(0, 24)}`;

export type ErasureOutcome = 'erased' | 'pending';

/**
 * DELETE /me. Steps: mark the user erasing (its tokens stop working) → release its identity (a
 * later sign-in makes a new user) → erase everything while `hasTime()` says the invocation has
 * time left; what is left is the sweep's.
 */
export async function requestErasure(
  deps: ErasureDeps,
  input: { userId: string; hasTime: () => boolean },
): Promise<ErasureOutcome> {
  const user = await deps.users.markErasing(input.userId, isoNow(deps.clock));
  if (!user) return 'erased';
  await deps.users.releaseIdentity(user.providerUserId, user.id);
  return eraseUser(deps, user, input.hasTime);
}

/**
 * Erases a user marked erasing. Steps: each API key (refused already: its user is erasing) → each file through the route's delete (its run retired, so
 * queued pipeline messages become no-ops; chunks, attachments, objects, quota) → each chat through
 * the route's delete (messages, reply states, pointers, shares, feedback, search entries) → each
 * collection through the route's delete → each webhook endpoint with its delivery log → each
 * order kept under a tombstone → the counters' partition (limits, slots, pending purges) → any
 * object left under the user's upload and export prefixes → the user's partition, the profile last of all.
 * Stops between items when `hasTime()` turns false ('pending').
 */
export async function eraseUser(
  deps: ErasureDeps,
  user: Pick<ErasingUser, 'id' | 'providerUserId'>,
  hasTime: () => boolean = () => true,
): Promise<ErasureOutcome> {
  const userId = user.id;
  // A concurrent erasure (the route and the sweep) may have deleted an item already: not found is done.
  const unlessGone = (err: unknown) => {
    if (!(err instanceof NotFoundError)) throw err;
  };
  for await (const keyId of userListIds(deps.db, deps.table, userId, 'APIKEY')) {
    if (!hasTime()) return 'pending';
    await deps.apiKeys.revoke(keyId, userId);
  }
  for await (const fileId of userListIds(deps.db, deps.table, userId, 'FILE')) {
    if (!hasTime()) return 'pending';
    await deleteUpload(deps.uploads, { userId, fileId }).catch(unlessGone);
  }
  for await (const chatId of userListIds(deps.db, deps.table, userId, 'CHAT')) {
    if (!hasTime()) return 'pending';
    await deps.chats.delete(chatId, userId).catch(unlessGone);
  }
  for await (const collectionId of userListIds(deps.db, deps.table, userId, 'COLLECTION')) {
    if (!hasTime()) return 'pending';
    await deleteCollection(deps.collections, { userId, collectionId }).catch(unlessGone);
  }
  for (const endpoint of (await deps.webhooks?.listEndpoints(userId)) ?? []) {
    if (!hasTime()) return 'pending';
    await deps.webhooks!.deleteEndpoint(userId, endpoint.id).catch(unlessGone);
  }
  const tombstone = tombstoneUserId(userId);
  for await (const orderId of userListIds(deps.db, deps.table, userId, 'ORDER')) {
    await deps.orders.tombstone(orderId, tombstone);
  }
  if (!hasTime()) return 'pending';
  await deps.counters.deleteSubject(userId);
  await deps.uploads.storage.deletePrefix(userUploadsPrefix(userId));
  // Export ZIPs; their jobs are items of the user's partition, deleted with it.
  await deps.uploads.storage.deletePrefix(userExportsPrefix(userId));
  await deps.users.releaseIdentity(user.providerUserId, userId);
  await deps.users.deleteUserPartition(userId);
  return 'erased';
}

/** The sweep: finishes every erasure still marked (cut short, or left to it). How many it finished. */
export async function resumeErasures(deps: ErasureDeps): Promise<number> {
  let finished = 0;
  for await (const user of deps.users.erasing()) {
    if ((await eraseUser(deps, user)) === 'erased') finished++;
  }
  return finished;
}
