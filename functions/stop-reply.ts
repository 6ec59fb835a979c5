import '#shared/config/chat.ts';
import { chatRoutes } from '#shared/chats/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { chatRepositories } from '#shared/chats/repositories.ts';
import { stopReply } from '#shared/chats/replies/reply-service.ts';
import { replyParams } from '#shared/chats/requests.ts';

// POST /chat/{chatId}/messages/{messageId}/stop: the reply stops wherever it is generated.

const deps = { ...chatRepositories(dynamo(), tableName()), clock: systemClock, staleMs: config().REPLY_STALE_MS };

export const handler = httpHandler(chatRoutes['stop-reply'], { params: replyParams }, ({ params, user }) =>
  stopReply(deps, { userId: user.id, ...params }),
);
