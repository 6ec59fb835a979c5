import { chatRoutes } from '#shared/chats/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { feedbackDeps } from '#shared/chats/conversations/feedback-deps.ts';
import { removeFeedback } from '#shared/chats/conversations/feedback-service.ts';
import { replyParams } from '#shared/chats/requests.ts';

// DELETE /chat/{chatId}/messages/{messageId}/feedback: the reply's rating removed (none: unchanged).

const deps = feedbackDeps(systemClock);

export const handler = httpHandler(chatRoutes['delete-feedback'], { params: replyParams }, ({ params, user }) =>
  removeFeedback(deps, { userId: user.id, ...params }),
);
