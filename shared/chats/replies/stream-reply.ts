import { AiProviderError } from '../../ai/errors.ts';
import { estimateUsage, unreportedUsage } from '../../ai/prompt.ts';
import { isoNow } from '../../clock.ts';
import type { TokenReservation } from '../../limits/user-limits.ts';
import type { Usage } from '../../ai/types.ts';
import { DomainError, TimedOutError, asError } from '../../errors.ts';
import { logger } from '../../observability/logger.ts';
import { CitationStream, citableSources } from './citations.ts';
import { addUsage } from './retrieval-query.ts';
import type { ReplyStatus } from '../schemas.ts';
import { closingEvents, firstDeltaId, openingEvents, type ReplyEvent } from './reply-events.ts';
import { ReplyLength } from './reply-length.ts';
import type { ReplyState } from './reply-repository.ts';
import type { Prepared } from './prepare-reply.ts';
import { settle } from './reply-budget.ts';
import { flagCited, titleChat } from './record-reply.ts';
import { ReplyRecorder } from './reply-recorder.ts';
import { deadlineOf, failureMessage, type SendMessageDeps, type TurnRequest } from './reply-request.ts';

/**
 * A streamed reply once it is stored as streaming (send-message.ts `streamMessage`): the opening
 * events, one per model delta (cut at the reply's length, reply-length.ts; in a file chat checked
 * for markers, citations.ts), the text stored as it grows (ReplyRecorder) until the model ends, a
 * stop or the deadline → title a new chat → settle the budget → the last write (the whole text,
 * usage, status, title) → the closing events.
 */
export async function* generate(
  deps: SendMessageDeps,
  req: TurnRequest,
  prepared: Prepared,
  reply: ReplyState,
  reservation: TokenReservation | undefined,
): AsyncGenerator<ReplyEvent> {
  const { chat, userMessage, input, sources, queryUsage } = prepared;
  const replyId = reply.message.id;
  const citations = sources ? new CitationStream(citableSources(sources)) : undefined;
  const length = new ReplyLength(input.maxTokens);
  const recorder = new ReplyRecorder(deps, chat.id, reply.message.sequenceNumber);
  const deadlineMs = deadlineOf(req);
  const signal = deadlineMs ? AbortSignal.any([recorder.stopped, AbortSignal.timeout(deadlineMs)]) : recorder.stopped;
  const start = {
    chatId: chat.id,
    userMessageId: userMessage.id,
    userSequenceNumber: userMessage.sequenceNumber,
    messageId: replyId,
  };
  yield* openingEvents(start, sources);
  let id = firstDeltaId(!!sources);
  let usage: Usage | undefined;
  let failure: unknown;
  const delta = (text: string): ReplyEvent | undefined => {
    if (!text) return undefined;
    recorder.add(text);
    return { id: id++, data: { content: text } };
  };
  try {
    for await (const part of deps.provider.streamReply({ ...input, signal })) {
      if (part.type !== 'delta') {
        usage = part.usage;
        continue;
      }
      const kept = length.take(part.text);
      const event = delta(citations ? citations.push(kept) : kept);
      if (event) yield event;
      if (length.full) break; // the model ignored the reply's length: its request is closed
    }
    if (signal.aborted && !recorder.stopped.aborted)
      failure = new TimedOutError('The reply took too long and was cut short');
  } catch (err) {
    if (!recorder.stopped.aborted) failure = err;
  }
  const tail = delta(citations?.end() ?? '');
  if (tail) yield tail;
  await recorder.close();

  const text = recorder.text;
  const total = addUsage(usage ?? estimateUsage(input, text), queryUsage);
  const complete = failure === undefined && !recorder.stopped.aborted;
  const titled = complete ? await titleChat(deps, prepared, text) : { tokens: 0 };
  // What the model was sent and produced is paid for, however the reply ended.
  const replyTokens = (usage ?? unreportedUsage(input, text, failure)).totalTokens;
  await settle(deps, reservation, replyTokens + titled.tokens + prepared.spent.tokens, prepared.spent);
  if (failure && !(failure instanceof AiProviderError) && !(failure instanceof DomainError)) {
    logger.error('streamed reply failed', { error: asError(failure) });
  } else if (failure) {
    logger.warn('streamed reply failed', { message: asError(failure).message });
  }
  const cited = citations ? [...citations.cited].sort((a, b) => a - b) : undefined;
  const failedWith = failure === undefined ? undefined : failureMessage(failure);
  let status: ReplyStatus | undefined;
  try {
    status = await deps.replies.finish(chat.id, reply.message.sequenceNumber, {
      text,
      deltaEnds: recorder.deltaEnds,
      status: failedWith === undefined ? 'complete' : 'failed',
      usage: total,
      ...(sources && citations && { sources: flagCited(sources, citations.cited) }),
      ...(cited && { cited }),
      failureMessage: failedWith,
      title: titled.title,
      now: isoNow(deps.clock),
    });
  } catch (err) {
    logger.error('could not store the streamed reply', { error: asError(err) });
  }
  if (!status) {
    yield { id, event: 'error', data: { message: 'The reply could not be saved' } };
    return;
  }
  yield* closingEvents({
    ...reply,
    message: { ...reply.message, status, usage: total, ...(sources && { sources }) },
    deltaEnds: recorder.deltaEnds,
    ...(cited && { cited }),
    ...(failedWith !== undefined && { failureMessage: failedWith }),
    ...(titled.title && { title: titled.title }),
    finished: true,
  });
}
