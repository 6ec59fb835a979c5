import '#shared/config/sharing.ts';
import { sharingRoutes } from '#shared/sharing/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { requestBaseUrl } from '#shared/http/base-url.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { chatRepositories } from '#shared/chats/repositories.ts';
import { chatIdParams } from '#shared/chats/requests.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { ShareRepository } from '#shared/sharing/share-repository.ts';
import { shareChat } from '#shared/sharing/share-service.ts';

// POST /chat/{chatId}/share: a read-only snapshot of the chat, readable by anyone with its link.

const route = sharingRoutes['share-chat'];
const settings = config();
const deps = {
  ...chatRepositories(dynamo(), tableName()),
  shares: new ShareRepository(dynamo(), tableName()),
  files: new FileRepository(dynamo(), tableName()),
  clock: systemClock,
  maxBytes: settings.SHARE_MAX_BYTES,
};

export const handler = httpHandler(route, { params: chatIdParams }, async ({ params, user, event }) => {
  const baseUrl = settings.PUBLIC_BASE_URL ?? requestBaseUrl(event, route);
  return shareChat(deps, { userId: user.id, chatId: params.chatId, baseUrl });
});
