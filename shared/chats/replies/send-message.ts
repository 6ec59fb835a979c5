import { createId } from '../../ids.ts';
import { unreportedUsage } from '../../ai/prompt.ts';
import { isoNow } from '../../clock.ts';
import type { TokenReservation } from '../../limits/user-limits.ts';
import type { Usage } from '../../ai/types.ts';
import { checkCitations, citableSources } from './citations.ts';
import { addUsage } from './retrieval-query.ts';
import type { ReplyStream } from './reply-events.ts';
import { ReplyLength } from './reply-length.ts';
import type { ReplyState } from './reply-repository.ts';
import { begin, type Prepared } from './prepare-reply.ts';
import { releaseReplySlot, settle } from './reply-budget.ts';
import { flagCited, storeReply, titleChat } from './record-reply.ts';
import { generate } from './stream-reply.ts';
import { deadlineError, deadlineOf, type Reply, type ReplyRequest, type SendMessageDeps } from './reply-request.ts';

// POST /message/logged-in and POST …/regenerate: a prompt in (new, or stored and answered again),
// the assistant's reply out, whole or as an event stream. A reply's life, one file a step:
// reply-request.ts (what it is asked and works with), prepare-reply.ts (checks, slot, reservation,
// the prompt stored, history, passages), reply-budget.ts (slot and tokens), stream-reply.ts (a
// streamed reply's model call and events), reply-recorder.ts (a streamed reply stored as it grows),
// record-reply.ts (a whole reply stored, the title); reply-service.ts follows or stops a stream.

/**
 * The reply in one piece (a token reservation first: refused when the daily budget cannot hold it).
 * Steps: begin (prepare-reply.ts) → call the model (within the deadline) → keep what fits the reply's length
 * (reply-length.ts) → in a file chat, remove the
 * [n] markers that name no source and flag the cited sources → title a new chat → store the
 * reply under its prompt with its usage (the follow-up rewrite's included) and sources → return
 * it. A model failure leaves a new prompt stored, unanswered.
 */
export async function sendMessage(deps: SendMessageDeps, req: ReplyRequest): Promise<Reply> {
  const { prepared, reservation, slot } = await begin(deps, req);
  try {
    return await replyWhole(deps, req, prepared, reservation);
  } finally {
    await releaseReplySlot(deps, slot);
  }
}

async function replyWhole(
  deps: SendMessageDeps,
  req: ReplyRequest,
  prepared: Prepared,
  reservation: TokenReservation | undefined,
): Promise<Reply> {
  let result: { text: string; usage: Usage };
  try {
    const deadlineMs = deadlineOf(req);
    result = await deps.provider.reply({
      ...prepared.input,
      ...(deadlineMs && { signal: AbortSignal.timeout(deadlineMs) }),
    });
  } catch (err) {
    // Sent and then cut (a timeout): the prompt was read and is paid for.
    await settle(
      deps,
      reservation,
      unreportedUsage(prepared.input, '', err).totalTokens + prepared.spent.tokens,
      prepared.spent,
    );
    throw deadlineError(err);
  }
  const { chat, userMessage } = prepared;
  const replyTokens = result.usage.totalTokens;
  const text = new ReplyLength(deps.settings.replyMaxTokens).take(result.text);
  result = { text, usage: addUsage(result.usage, prepared.queryUsage) };
  let sources = prepared.sources;
  if (sources) {
    const checked = checkCitations(result.text, citableSources(sources));
    result = { ...result, text: checked.text };
    sources = flagCited(sources, checked.cited);
  }
  const titled = await titleChat(deps, prepared, result.text);
  await settle(deps, reservation, replyTokens + titled.tokens + prepared.spent.tokens, prepared.spent);
  const stored = await storeReply(deps, {
    chatId: chat.id,
    userId: req.userId,
    promptId: userMessage.id,
    text: result.text,
    usage: result.usage,
    sources,
  });
  return {
    response: result.text,
    userMessageId: userMessage.id,
    usage: result.usage,
    sources,
    messageId: stored.id,
    sequenceNumber: stored.sequenceNumber,
    status: 'complete',
    ...(titled.title && { chatName: titled.title }),
  };
}

/**
 * The reply as a stream of events (shared/chats/replies/reply-events.ts). Client errors are thrown
 * before any event, so they are ordinary JSON responses.
 * Steps: begin (prepare-reply.ts) → store the reply under its prompt, status streaming, so it can be read,
 * resumed and stopped from anywhere → `start`, naming the prompt and the reply → in a file chat
 * `sources`, so a client knows every [n] before it is cited → one event per model delta (cut at
 * the reply's length, reply-length.ts; in a file chat checked for markers, citations.ts), the text stored as it grows (ReplyRecorder)
 * → title a new chat → the last write: the whole text, usage, status complete or failed (stopped
 * when a stop came), the title → the closing events (citations, usage, title, stopped, or error).
 */
export async function streamMessage(deps: SendMessageDeps, req: ReplyRequest): Promise<ReplyStream> {
  const { prepared, reservation, slot } = await begin(deps, req);
  let reply: ReplyState;
  try {
    reply = await deps.replies.start({
      id: createId(),
      chatId: prepared.chat.id,
      userId: req.userId,
      promptId: prepared.userMessage.id,
      promptSequence: prepared.userMessage.sequenceNumber,
      ...(prepared.sources && { sources: prepared.sources }),
      now: isoNow(deps.clock),
    });
  } catch (err) {
    await settle(deps, reservation, prepared.spent.tokens, prepared.spent);
    await releaseReplySlot(deps, slot);
    throw err;
  }
  return {
    open: async function* () {
      try {
        yield* generate(deps, req, prepared, reply, reservation);
      } finally {
        await releaseReplySlot(deps, slot);
      }
    },
  };
}
