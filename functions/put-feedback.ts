import { chatRoutes } from '#shared/chats/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { metrics } from '#shared/observability/metrics.ts';
import { chatRepositories } from '#shared/chats/repositories.ts';
import { FeedbackRepository } from '#shared/chats/conversations/feedback-repository.ts';
import { setFeedback } from '#shared/chats/conversations/feedback-service.ts';
import { feedbackBody, replyParams } from '#shared/chats/requests.ts';

// PUT /chat/{chatId}/messages/{messageId}/feedback: rate an ai reply up or down (replaces an earlier rating).

const deps = {
  ...chatRepositories(dynamo(), tableName()),
  feedback: new FeedbackRepository(dynamo(), tableName()),
  clock: systemClock,
  metrics,
};

export const handler = httpHandler(
  chatRoutes['put-feedback'],
  { params: replyParams, body: feedbackBody },
  async ({ params, body, user }) => ({
    message: 'Feedback saved',
    data: await setFeedback(deps, { userId: user.id, ...params, ...body }),
  }),
);
