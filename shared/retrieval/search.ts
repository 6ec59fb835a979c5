import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { PartLocation } from '../readers/reader.ts';
import type { AiProvider } from '../ai/types.ts';
import { estimateTokens } from '../ai/tokens.ts';
import type { CollectionRepository } from '../collections/collection-repository.ts';
import { asError } from '../errors.ts';
import type { FileRepository } from '../files/file-repository.ts';
import { fileNotFound } from '../files/file-status.ts';
import type { UsageLedger } from '../limits/usage-ledger.ts';
import type { UserLimits } from '../limits/user-limits.ts';
import { logger } from '../observability/logger.ts';
import { userListIds } from '../user-index.ts';
import type { Retriever } from './retrieve.ts';

// POST /search: the best passages of the caller's completed files for a query, ranked by the
// retriever file chats use (hybrid: dense and BM25 fused), over a collection, some files, or all
// of the caller's files (docs/DECISIONS.md "Search across files").

export interface SearchDeps {
  db: DynamoDBDocumentClient;
  table: string;
  retrieve: Retriever;
  provider: AiProvider;
  collections: CollectionRepository;
  files: FileRepository;
  /** The daily token budget the query's embedding is held against, as a prompt's; absent: none. */
  budget?: Pick<UserLimits, 'reserveTokens' | 'settle'>;
  /** The user's usage counters (tokens by model); absent: not counted. */
  usage?: Pick<UsageLedger, 'addTokens'>;
}

export interface SearchRequest {
  userId: string;
  query: string;
  collectionId?: string | undefined;
  fileIds?: string[] | undefined;
  k: number;
}

export interface Passage {
  fileId: string;
  fileName: string;
  page: number;
  part: number;
  location: PartLocation;
  quote: string;
  charStart?: number;
  charEnd?: number;
  verified: boolean;
  score: number;
}

/**
 * The files a search covers: the caller's collection's, the caller's files named (both: the named
 * ones in the collection), or all the caller's. Anyone else's collection or file is not found, as
 * on their own routes; the retriever then keeps the completed ones.
 */
export async function searchedFiles(deps: SearchDeps, req: SearchRequest): Promise<string[]> {
  const inCollection =
    req.collectionId === undefined
      ? undefined
      : await deps.collections
          .getOwned(req.collectionId, req.userId)
          .then((c) => deps.collections.memberIds(c.id))
          .then((ids) => new Set(ids));
  if (req.fileIds !== undefined) {
    const named = [...new Set(req.fileIds)];
    const owned = new Set((await deps.files.getMany(named)).filter((f) => f.userId === req.userId).map((f) => f.id));
    if (named.some((id) => !owned.has(id))) throw fileNotFound();
    return inCollection ? named.filter((id) => inCollection.has(id)) : named;
  }
  if (inCollection) return [...inCollection];
  const all: string[] = [];
  for await (const id of userListIds(deps.db, deps.table, req.userId, 'FILE')) all.push(id);
  return all;
}

/**
 * Steps: the files searched → hold the query's embedding (estimated) against the budget → the
 * retriever's best k passages → settle the budget to the tokens the embedding used and count them.
 */
export async function searchFiles(deps: SearchDeps, req: SearchRequest): Promise<Passage[]> {
  const fileIds = await searchedFiles(deps, req);
  const reservation = await deps.budget?.reserveTokens(req.userId, estimateTokens(req.query));
  let embedded = 0;
  try {
    const sources = await deps.retrieve({
      fileIds,
      prompt: req.query,
      provider: deps.provider,
      k: req.k,
      onEmbedded: (tokens) => {
        embedded += tokens;
      },
    });
    return sources.map((s) => ({
      fileId: s.fileId,
      fileName: s.fileName ?? '',
      page: s.page,
      part: s.part ?? s.page,
      location: s.location ?? { type: 'page', page: s.page },
      quote: s.quote,
      ...(s.charStart !== undefined && { charStart: s.charStart, charEnd: s.charEnd }),
      verified: s.verified === true,
      score: s.score,
    }));
  } finally {
    await Promise.all([
      deps.budget?.settle(reservation, embedded),
      deps.usage?.addTokens(req.userId, { [deps.provider.embeddingModel]: embedded }),
    ]).catch((err: unknown) => logger.error('could not count the search tokens', { error: asError(err) }));
  }
}
