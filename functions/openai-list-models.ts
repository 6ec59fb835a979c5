import { completionRoutes } from '#shared/completions/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { CollectionRepository } from '#shared/collections/collection-repository.ts';
import { listModels } from '#shared/completions/models.ts';
import { FileRepository } from '#shared/files/file-repository.ts';

// GET /openai/models: OpenAI's model list: chat, library, the caller's collections and files.

const deps = {
  db: dynamo(),
  table: tableName(),
  files: new FileRepository(dynamo(), tableName()),
  collections: new CollectionRepository(dynamo(), tableName()),
};

export const handler = httpHandler(completionRoutes['openai-list-models'], {}, ({ user }) =>
  listModels(deps, user.id, systemClock()),
);
