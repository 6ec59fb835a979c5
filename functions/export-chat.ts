import { sharingRoutes } from '#shared/sharing/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { chatRepositories } from '#shared/chats/repositories.ts';
import { chatIdParams } from '#shared/chats/requests.ts';
import { exportChat } from '#shared/sharing/export.ts';
import { exportQuery } from '#shared/sharing/schemas.ts';

// GET /chat/{chatId}/export?format=markdown|json: the caller's chat as a file to download.

const deps = { ...chatRepositories(dynamo(), tableName()), clock: systemClock };

export const handler = httpHandler(
  sharingRoutes['export-chat'],
  { params: chatIdParams, query: exportQuery },
  async ({ params, query, user }) => ({
    attachment: await exportChat(deps, { userId: user.id, chatId: params.chatId, format: query.format }),
  }),
);
