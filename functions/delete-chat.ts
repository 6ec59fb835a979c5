import { chatRoutes } from '#shared/chats/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { done } from '#shared/http/done.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { systemClock } from '#shared/clock.ts';
import { UsageLedger } from '#shared/limits/usage-ledger.ts';
import { ChatRepository } from '#shared/chats/conversations/chat-repository.ts';
import { deleteChat } from '#shared/chats/conversations/chat-service.ts';
import { chatIdParams } from '#shared/chats/requests.ts';

// DELETE /chat/{chatId}: the chat with every message and attachment in its partition.

const deps = {
  chats: new ChatRepository(dynamo(), tableName()),
  usage: new UsageLedger(dynamo(), tableName(), systemClock),
};

export const handler = httpHandler(chatRoutes['delete-chat'], { params: chatIdParams }, ({ params, user }) =>
  done(deleteChat(deps, { userId: user.id, chatId: params.chatId }), { id: params.chatId }),
);
