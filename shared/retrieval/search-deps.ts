import { dynamo, tableName } from '../clients.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { aiProvider } from '../ai/provider.ts';
import { CollectionRepository } from '../collections/collection-repository.ts';
import { FileRepository } from '../files/file-repository.ts';
import { UsageLedger } from '../limits/usage-ledger.ts';
import { userLimits } from '../limits/user-limits.ts';
import type { Retriever } from './retrieve.ts';
import type { SearchDeps } from './search.ts';

/**
 * What searching the caller's files works with, composed once per function instance: POST
 * /search's, and the MCP tools' (which add their own beside it). The retriever is the caller's:
 * POST /search composes it at cold start, the MCP server on its first search.
 */
export async function searchDeps(settings: Config, clock: Clock, retrieve: Retriever) {
  return {
    db: dynamo(),
    table: tableName(),
    retrieve,
    provider: await aiProvider(),
    collections: new CollectionRepository(dynamo(), tableName()),
    files: new FileRepository(dynamo(), tableName()),
    budget: userLimits(dynamo(), settings, clock),
    usage: new UsageLedger(dynamo(), tableName(), clock),
  } satisfies SearchDeps;
}
