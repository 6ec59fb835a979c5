import { chatRoutes } from '#shared/chats/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ChatRepository } from '#shared/chats/conversations/chat-repository.ts';
import { getChat } from '#shared/chats/conversations/chat-service.ts';
import { chatIdParams } from '#shared/chats/requests.ts';
import { chatFilesDeps } from '#shared/files/chat-files.ts';
import { CollectionRepository } from '#shared/collections/collection-repository.ts';

// GET /chat/{chatId}: one of the caller's chats, with the files attached to it and their status.

const deps = {
  chats: new ChatRepository(dynamo(), tableName()),
  files: { ...chatFilesDeps(dynamo(), tableName()), collections: new CollectionRepository(dynamo(), tableName()) },
};

export const handler = httpHandler(chatRoutes['get-chat'], { params: chatIdParams }, ({ params, user }) =>
  getChat(deps, { userId: user.id, chatId: params.chatId }),
);
