import { createId } from '../../ids.ts';
import { sleep, type Clock } from '../../clock.ts';
import { asError, InvalidInputError, NotFoundError } from '../../errors.ts';
import type { HeldSlot } from '../../limits/in-flight-slots.ts';
import type { UserLimits } from '../../limits/user-limits.ts';
import { logger } from '../../observability/logger.ts';
import type { ChatRepository } from '../conversations/chat-repository.ts';
import { storedEvents, type ReplyEvent, type ReplyStream } from './reply-events.ts';
import type { ReplyRepository, ReplyState } from './reply-repository.ts';
import type { Message } from '../schemas.ts';

// A streamed reply outlives its connection: anyone may follow it (the owner, from any instance)
// by replaying what was stored after the last event they had and then what the generator stores
// next, or stop it. Both work from the table alone, so they never need the instance generating.

export interface ReplyDeps {
  chats: ChatRepository;
  replies: ReplyRepository;
  clock: Clock;
  /** A generator that has not written for this long is taken for dead (REPLY_STALE_MS). */
  staleMs: number;
  /** The user's streams following replies (shared/limits/user-limits.ts); absent: not limited. */
  limits?: Pick<UserLimits, 'takeInFlight' | 'releaseInFlight'>;
}

interface OfReply {
  userId: string;
  chatId: string;
  messageId: string;
}

/** How often a follower reads the reply for what the generator stored since. */
const FOLLOW_POLL_MS = 250;
/** How long a follower may hold its slots when the invocation's time left is unknown (Lambda's most). */
const FOLLOW_LEASE_FALLBACK_MS = 15 * 60_000;
/** Beyond the invocation's end, for a release under way when it ends. */
const FOLLOW_LEASE_MARGIN_MS = 5_000;
/** How long a stop waits for the generator to store where it stopped. */
const STOP_WAIT_MS = 3_000;
const INTERRUPTED = 'The reply was interrupted: the server generating it stopped';

/** The caller's reply (a stranger's chat, or no such reply, is 404), settled first if its generator died. */
async function ownedReply(deps: ReplyDeps, input: OfReply): Promise<ReplyState> {
  await deps.chats.getOwned(input.chatId, input.userId);
  const state = await deps.replies.get(input.chatId, input.messageId);
  if (!state) throw new NotFoundError('No streamed reply with this id in this chat');
  return settleIfDead(deps, state);
}

/** A reply whose generator stopped writing (its instance died) is failed, or finished where it stopped. */
async function settleIfDead(deps: ReplyDeps, state: ReplyState): Promise<ReplyState> {
  if (state.finished) return state;
  const staleBefore = new Date(deps.clock().getTime() - deps.staleMs).toISOString();
  if (state.heartbeatAt >= staleBefore) return state;
  const { chatId, sequenceNumber } = state.message;
  await deps.replies.failStale(chatId, sequenceNumber, staleBefore, INTERRUPTED);
  return (await deps.replies.at(chatId, sequenceNumber)) ?? state;
}

/** The event id a client had: Last-Event-ID or ?after (the header wins), 0 for none. */
function lastEventId(lastEventIdHeader: string | undefined, after: number | undefined): number {
  if (lastEventIdHeader === undefined) return after ?? 0;
  if (!/^\d{1,9}$/.test(lastEventIdHeader.trim()))
    throw new InvalidInputError('Last-Event-ID must be the id of an event of this reply (a whole number)', [
      { path: 'headers.last-event-id', message: 'Must be a whole number' },
    ]);
  return Number(lastEventIdHeader.trim());
}

/**
 * GET /chat/{chatId}/messages/{messageId}/stream: the reply's events after the one the client
 * had, then, while it is generated, what the generator stores next, to its end.
 * Steps: the event id the client had → the caller's reply → a slot among the reply's followers
 * (REPLY_MAX_FOLLOWERS) and one among the user's (FOLLOWS_MAX_IN_FLIGHT_PER_USER), each refused
 * with 429 before the stream opens → the stream, which frees both when it ends: the reply ended,
 * or the client left (docs/DECISIONS.md "Followers of a reply").
 */
export async function followReply(
  deps: ReplyDeps,
  input: OfReply & { lastEventId?: string; after?: number; remainingMs?: number },
): Promise<ReplyStream> {
  const after = lastEventId(input.lastEventId, input.after);
  const state = await ownedReply(deps, input);
  const slots = await takeFollowerSlots(deps, input);
  return {
    open: async function* (clientGone) {
      try {
        yield* follow(deps, state, after, clientGone);
      } finally {
        await releaseFollowerSlots(deps, slots);
      }
    },
  };
}

/**
 * One of the reply's follower slots, then one of the user's, for as long as this invocation may
 * run (a follower whose invocation dies holds them no longer); the first is given back when the
 * second is refused.
 */
async function takeFollowerSlots(deps: ReplyDeps, input: OfReply & { remainingMs?: number }) {
  if (!deps.limits) return [];
  const lease = {
    holder: createId(),
    leaseMs: (input.remainingMs ?? FOLLOW_LEASE_FALLBACK_MS) + FOLLOW_LEASE_MARGIN_MS,
  };
  const ofReply = await deps.limits.takeInFlight(input.userId, 'followers', { ...lease, of: input.messageId });
  try {
    return [ofReply, await deps.limits.takeInFlight(input.userId, 'follows', lease)];
  } catch (err) {
    await releaseFollowerSlots(deps, [ofReply]);
    throw err;
  }
}

/** Frees a follower's slots; a failure here only leaves them to their leases. */
async function releaseFollowerSlots(deps: ReplyDeps, slots: (HeldSlot | undefined)[]) {
  await Promise.all(
    slots.map((slot) =>
      deps.limits
        ?.releaseInFlight(slot)
        .catch((err: unknown) => logger.error('could not release a follower slot', { error: asError(err) })),
    ),
  );
}

async function* follow(
  deps: ReplyDeps,
  first: ReplyState,
  after: number,
  clientGone: AbortSignal,
): AsyncGenerator<ReplyEvent> {
  const { chatId, sequenceNumber } = first.message;
  let state: ReplyState | undefined = first;
  let sent = after;
  while (state) {
    for (const event of storedEvents(state, sent)) {
      yield event;
      sent = event.id;
    }
    if (state.finished || clientGone.aborted) return;
    await sleep(FOLLOW_POLL_MS, clientGone);
    const next: ReplyState | undefined = await deps.replies.at(chatId, sequenceNumber); // gone: its chat was deleted
    state = next && (await settleIfDead(deps, next));
  }
}

/**
 * POST /chat/{chatId}/messages/{messageId}/stop: a reply being generated stops within a flush of
 * its generator, wherever it runs, and is stored as far as it got; the message as stored then.
 * A finished reply is left as it is.
 */
export async function stopReply(deps: ReplyDeps, input: OfReply): Promise<Message> {
  let state = await ownedReply(deps, input);
  const { chatId, sequenceNumber } = state.message;
  if (state.message.status === 'streaming') await deps.replies.stop(chatId, sequenceNumber);
  const deadline = Date.now() + STOP_WAIT_MS;
  while (!state.finished && Date.now() < deadline) {
    await sleep(100);
    const next = await deps.replies.at(chatId, sequenceNumber);
    if (!next) throw new NotFoundError('No streamed reply with this id in this chat');
    state = await settleIfDead(deps, next);
  }
  return state.message;
}
