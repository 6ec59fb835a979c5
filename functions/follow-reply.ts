import '#shared/config/chat.ts';
import { chatRoutes } from '#shared/chats/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { chatRepositories } from '#shared/chats/repositories.ts';
import { followReply } from '#shared/chats/replies/reply-service.ts';
import { followReplyQuery, replyParams } from '#shared/chats/requests.ts';
import { userLimits } from '#shared/limits/user-limits.ts';

// GET /chat/{chatId}/messages/{messageId}/stream: a streamed reply's events after Last-Event-ID
// (or ?after), replayed from the table, then followed to its end; the streams one user may have
// open are limited.

const settings = config();
const deps = {
  ...chatRepositories(dynamo(), tableName()),
  clock: systemClock,
  staleMs: settings.REPLY_STALE_MS,
  limits: userLimits(dynamo(), settings, systemClock),
};

export const handler = httpHandler(
  chatRoutes['follow-reply'],
  { params: replyParams, query: followReplyQuery },
  async ({ params, query, headers, user, context }) => {
    const input = {
      userId: user.id,
      ...params,
      lastEventId: headers['last-event-id'],
      after: query.after,
      remainingMs: context.getRemainingTimeInMillis?.(),
    };
    return { events: { source: await followReply(deps, input), heartbeatMs: settings.STREAM_HEARTBEAT_MS } };
  },
);
