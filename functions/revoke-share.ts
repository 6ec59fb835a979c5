import { sharingRoutes } from '#shared/sharing/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ChatRepository } from '#shared/chats/conversations/chat-repository.ts';
import { chatIdParams } from '#shared/chats/requests.ts';
import { ShareRepository } from '#shared/sharing/share-repository.ts';
import { revokeShare } from '#shared/sharing/share-service.ts';

// DELETE /chat/{chatId}/share: the chat's share ends; its link answers 404 from now on.

const deps = { chats: new ChatRepository(dynamo(), tableName()), shares: new ShareRepository(dynamo(), tableName()) };

export const handler = httpHandler(sharingRoutes['revoke-share'], { params: chatIdParams }, ({ params, user }) =>
  revokeShare(deps, { userId: user.id, chatId: params.chatId }),
);
