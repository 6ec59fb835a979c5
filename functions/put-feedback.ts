import { chatRoutes } from '#shared/chats/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { feedbackDeps } from '#shared/chats/conversations/feedback-deps.ts';
import { setFeedback } from '#shared/chats/conversations/feedback-service.ts';
import { feedbackBody, replyParams } from '#shared/chats/requests.ts';

// PUT /chat/{chatId}/messages/{messageId}/feedback: rate an ai reply up or down (replaces an earlier rating).

const deps = feedbackDeps(systemClock);

export const handler = httpHandler(
  chatRoutes['put-feedback'],
  { params: replyParams, body: feedbackBody },
  ({ params, body, user }) => setFeedback(deps, { userId: user.id, ...params, ...body }),
);
