import { sharingRoutes } from '#shared/sharing/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { ShareRepository } from '#shared/sharing/share-repository.ts';
import { readSharedChat } from '#shared/sharing/share-service.ts';
import { shareIdParams } from '#shared/sharing/schemas.ts';

// GET /shared/{shareId}: a shared chat, for anyone with its link (no Authorization; limited per source IP).

const deps = { shares: new ShareRepository(dynamo(), tableName()), files: new FileRepository(dynamo(), tableName()) };

export const handler = httpHandler(sharingRoutes['get-shared-chat'], { params: shareIdParams }, ({ params }) =>
  readSharedChat(deps, { shareId: params.shareId }),
);
