import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ChatRepository } from '#shared/chats/chat-repository.ts';
import { chatIdParams } from '#shared/chats/schemas.ts';
import { AttachmentRepository } from '#shared/files/attachment-repository.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { chatFiles } from '#shared/files/chat-files.ts';
import { toEmbeddingsData } from '#shared/files/file-view.ts';

// GET /chat/{chatId}: one of the caller's chats, with the files attached to it and their status.
const chats = new ChatRepository(dynamo(), tableName());
const files = {
  attachments: new AttachmentRepository(dynamo(), tableName()),
  files: new FileRepository(dynamo(), tableName()),
};

export const handler = httpHandler(httpRoutes['get-chat'], { params: chatIdParams }, async ({ params, user }) => {
  const chat = await chats.getOwned(params.chatId, user.id);
  return { data: { ...chat, files: (await chatFiles(files, chat.id)).map(toEmbeddingsData) } };
});
