import { chatRoutes } from '#shared/chats/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { UsageLedger } from '#shared/limits/usage-ledger.ts';
import { ChatRepository } from '#shared/chats/conversations/chat-repository.ts';
import { CollectionRepository } from '#shared/collections/collection-repository.ts';
import { createChat } from '#shared/chats/conversations/chat-service.ts';
import { createChatBody } from '#shared/chats/requests.ts';

// POST /chat: a new chat of the caller's (201).

const deps = {
  chats: new ChatRepository(dynamo(), tableName()),
  collections: new CollectionRepository(dynamo(), tableName()),
  usage: new UsageLedger(dynamo(), tableName(), systemClock),
  clock: systemClock,
};

export const handler = httpHandler(chatRoutes['create-chat'], { body: createChatBody }, ({ body, user }) =>
  createChat(deps, { userId: user.id, chat: body }),
);
