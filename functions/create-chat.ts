import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { isoNow, systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ChatRepository } from '#shared/chats/chat-repository.ts';
import { createChatBody } from '#shared/chats/schemas.ts';

// POST /chat: a new chat of the caller's (201).
const chats = new ChatRepository(dynamo(), tableName());

export const handler = httpHandler(httpRoutes['create-chat'], { body: createChatBody }, async ({ body, user }) => ({
  statusCode: 201,
  message: 'Chat created',
  data: await chats.create(user.id, body, isoNow(systemClock)),
}));
