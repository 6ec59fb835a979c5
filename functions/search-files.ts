import { retrievalRoutes } from '#shared/retrieval/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { s3Client } from '#shared/s3-client.ts';
import { aiProvider } from '#shared/ai/provider.ts';
import { CollectionRepository } from '#shared/collections/collection-repository.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { userLimits } from '#shared/limits/user-limits.ts';
import { UsageLedger } from '#shared/limits/usage-ledger.ts';
import { retrieverFor } from '#shared/retrieval/retrieve.ts';
import { searchFiles } from '#shared/retrieval/search.ts';
import { searchFilesBody } from '#shared/retrieval/schemas.ts';

// POST /search: passages across the caller's completed files (a collection's, some, or all).

const settings = config();
const deps = {
  db: dynamo(),
  table: tableName(),
  retrieve: retrieverFor(settings, dynamo(), s3Client()),
  provider: await aiProvider(),
  collections: new CollectionRepository(dynamo(), tableName()),
  files: new FileRepository(dynamo(), tableName()),
  budget: userLimits(dynamo(), settings, systemClock),
  usage: new UsageLedger(dynamo(), tableName(), systemClock),
};

export const handler = httpHandler(
  retrievalRoutes['search-files'],
  { body: searchFilesBody },
  async ({ body, user }) => ({
    message: 'Passages found',
    data: await searchFiles(deps, { userId: user.id, ...body }),
  }),
);
