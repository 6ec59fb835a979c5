import { createId } from '../../ids.ts';
import type { TokenReservation } from '../../limits/user-limits.ts';
import type { HeldSlot } from '../../limits/in-flight-slots.ts';
import type { ChatTurn } from '../../ai/types.ts';
import { asError } from '../../errors.ts';
import { logger } from '../../observability/logger.ts';
import type { ChatRecord } from '../conversations/chat-repository.ts';
import { replyCostBound } from './reply-cost.ts';
import {
  DEADLINE_MARGIN_MS,
  DEFAULT_CHUNK_TOKENS,
  DEFAULT_RETRIEVAL_K,
  type SendMessageDeps,
  type TurnRequest,
} from './reply-request.ts';

// What a reply holds of the user's limits: a slot among the replies in flight, and its cost
// reserved against the daily token budget, then settled to what it really used.

/** Tokens spent while preparing a reply, counted as they are (a failure later still charges them). */
export interface Spent {
  userId: string;
  tokens: number;
  /** Of `tokens`, those of the query's embedding (the embedding model's; the rest are the chat model's). */
  embedded: number;
}

/** The longest a reply may hold its slot when the invocation's time left is unknown (Lambda's most). */
const REPLY_LEASE_FALLBACK_MS = 15 * 60_000;

/**
 * One of the user's REPLIES_MAX_IN_FLIGHT_PER_USER slots, for as long as this invocation may
 * run: released however the reply ends, and if the invocation dies first, free when it would
 * have ended (docs/DECISIONS.md "Atomic admission of work in flight").
 */
export function takeReplySlot(deps: Pick<SendMessageDeps, 'budget'>, req: Omit<TurnRequest, 'chatId'>) {
  return deps.budget?.takeInFlight(req.userId, 'replies', {
    holder: createId(),
    leaseMs: (req.remainingMs ?? REPLY_LEASE_FALLBACK_MS) + DEADLINE_MARGIN_MS,
  });
}

/** Frees a reply's slot; a failure here only leaves the slot to its lease. */
export async function releaseReplySlot(deps: Pick<SendMessageDeps, 'budget'>, slot: HeldSlot | undefined) {
  await deps.budget
    ?.releaseInFlight(slot)
    .catch((err: unknown) => logger.error('could not release a reply slot', { error: asError(err) }));
}

/**
 * Holds the reply's most likely cost against the user's daily budget before anything is stored (a
 * refusal then changes nothing): the whole prompt as it will be sent (history included; in a file
 * chat the passages, rewrite and query embedding at their most) plus the longest reply
 * (reply-cost.ts). Settled to the real usage once the reply is known (shared/limits/user-limits.ts).
 */
export async function reserve(
  deps: SendMessageDeps,
  userId: string,
  chat: ChatRecord,
  prompt: string,
  history: ChatTurn[],
) {
  const { settings } = deps;
  const tokens = replyCostBound(
    {
      system: chat.systemMessage,
      history,
      prompt,
      maxTokens: settings.replyMaxTokens,
      fileChat: chat.type === 'file',
    },
    chat.type === 'file'
      ? {
          k: settings.retrievalK ?? DEFAULT_RETRIEVAL_K,
          chunkTokens: settings.chunkTokens ?? DEFAULT_CHUNK_TOKENS,
          rewrite: deps.provider.name !== 'offline',
        }
      : undefined,
  );
  return deps.budget?.reserveTokens(userId, tokens);
}

/**
 * Settles a reservation and counts the tokens by model (the user's usage); a failure here must
 * not lose a reply already generated.
 */
export async function settle(
  deps: Pick<SendMessageDeps, 'budget' | 'usage' | 'provider'>,
  reservation: TokenReservation | undefined,
  usedTokens: number,
  spent: Spent,
) {
  const { chatModel, embeddingModel } = deps.provider;
  await Promise.all([
    deps.budget
      ?.settle(reservation, usedTokens)
      .catch((err: unknown) => logger.error('could not settle the token budget', { error: asError(err) })),
    deps.usage
      ?.addTokens(spent.userId, { [chatModel]: usedTokens - spent.embedded, [embeddingModel]: spent.embedded })
      .catch((err: unknown) => logger.error('could not count the tokens used', { error: asError(err) })),
  ]);
}
