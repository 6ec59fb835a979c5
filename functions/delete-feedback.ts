import { chatRoutes } from '#shared/chats/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { metrics } from '#shared/observability/metrics.ts';
import { chatRepositories } from '#shared/chats/repositories.ts';
import { FeedbackRepository } from '#shared/chats/conversations/feedback-repository.ts';
import { removeFeedback } from '#shared/chats/conversations/feedback-service.ts';
import { replyParams } from '#shared/chats/requests.ts';

// DELETE /chat/{chatId}/messages/{messageId}/feedback: the reply's rating removed (none: unchanged).

const deps = {
  ...chatRepositories(dynamo(), tableName()),
  feedback: new FeedbackRepository(dynamo(), tableName()),
  clock: systemClock,
  metrics,
};

export const handler = httpHandler(
  chatRoutes['delete-feedback'],
  { params: replyParams },
  async ({ params, user }) => ({
    message: 'Feedback removed',
    data: await removeFeedback(deps, { userId: user.id, ...params }),
  }),
);
