import { isoNow, type Clock } from '../../clock.ts';
import { InvalidInputError, NotFoundError } from '../../errors.ts';
import type { ServiceMetrics } from '../../observability/metrics.ts';
import type { ChatRepository } from './chat-repository.ts';
import type { FeedbackRepository, FeedbackWrite, ReplyAt } from './feedback-repository.ts';
import type { MessageRepository } from './message-repository.ts';
import type { Feedback, FeedbackRating, Message } from '../schemas.ts';

// Feedback on replies: the chat's owner rates an ai reply up or down, with an optional comment,
// replaces the rating or removes it. Only ai replies are rated: a prompt or a file attachment is
// a 400 that says so (its issue's code: NOT_AN_AI_REPLY). Each change of rating is counted in the metrics
// (docs/DECISIONS.md, Feedback on replies).

export interface FeedbackDeps {
  chats: ChatRepository;
  messages: MessageRepository;
  feedback: FeedbackRepository;
  clock: Clock;
  metrics: ServiceMetrics;
}

interface OfMessage {
  userId: string;
  chatId: string;
  messageId: string;
}

const NOT_AN_AI_REPLY = 'NOT_AN_AI_REPLY';
const messageNotFound = () => new NotFoundError('No message with this id in this chat');

/** The caller's ai reply to rate: a stranger's chat or an unknown message is 404, any other message 400. */
async function replyToRate(deps: FeedbackDeps, input: OfMessage): Promise<ReplyAt> {
  await deps.chats.getOwned(input.chatId, input.userId);
  const message = await deps.messages.byId(input.chatId, input.messageId);
  if (!message) throw messageNotFound();
  if (message.messageType !== 'ai') {
    const what = message.type === 'file' ? 'a file attachment' : `a ${message.messageType} message`;
    // The code goes in the field issue too: the envelope carries issues, not the error's own code.
    throw new InvalidInputError(
      `Only ai replies take feedback; this is ${what}`,
      [{ path: 'params.messageId', message: 'Not an ai reply', code: NOT_AN_AI_REPLY }],
      NOT_AN_AI_REPLY,
    );
  }
  return { chatId: input.chatId, sequenceNumber: message.sequenceNumber, messageId: message.id, userId: input.userId };
}

/** The written message, its rating change counted; a reply removed meanwhile (its chat deleted) is 404. */
function counted(deps: FeedbackDeps, written: FeedbackWrite | undefined): Message {
  if (!written) throw messageNotFound();
  deps.metrics.feedbackChanged(written.previous?.rating, written.message.feedback?.rating);
  return written.message;
}

/**
 * PUT /chat/{chatId}/messages/{messageId}/feedback: the reply's rating, replacing any earlier one.
 * Steps: the caller's chat → the message by id, an ai reply → conditional write of the feedback
 * → the change counted → the message as stored.
 */
export async function setFeedback(
  deps: FeedbackDeps,
  input: OfMessage & { rating: FeedbackRating; comment?: string },
): Promise<Message> {
  const at = await replyToRate(deps, input);
  const feedback: Feedback = { rating: input.rating, updatedAt: isoNow(deps.clock) };
  // A blank comment (after trimming) is no comment.
  if (input.comment) feedback.comment = input.comment;
  return counted(deps, await deps.feedback.set(at, feedback));
}

/** DELETE /chat/{chatId}/messages/{messageId}/feedback: the reply without its rating (none: unchanged). */
export async function removeFeedback(deps: FeedbackDeps, input: OfMessage): Promise<Message> {
  return counted(deps, await deps.feedback.remove(await replyToRate(deps, input)));
}
