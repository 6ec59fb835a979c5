import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { encodeCursor } from '../dynamo.ts';
import type { CollectionRepository } from '../collections/collection-repository.ts';
import { ConflictError, NotFoundError, ownedBy } from '../errors.ts';
import type { FileRepository } from '../files/file-repository.ts';
import { SERVICE_NAME } from '../observability/service-name.ts';
import { userListIds } from '../user-index.ts';

// The `model` of an OpenAI-compatible request names what the answer draws on (docs/DECISIONS.md
// "OpenAI-compatible API"): `chat` (no documents), `library` (all the caller's files),
// `collection:<id>` or `file:<id>` (the caller's). Anything else, another user's id included, is
// OpenAI's 404 model_not_found: the same answer for "no such" and "not yours".

export interface ModelDeps {
  db: DynamoDBDocumentClient;
  table: string;
  files: FileRepository;
  collections: CollectionRepository;
}

/** What a model answers from: nothing, or these files of the caller's (the retriever keeps the completed ones). */
export type ModelScope = { documents: false } | { documents: true; fileIds: string[] };

/** Pages of files read for the model list: its newest completed files, at most this many pages of 100. */
const LISTED_FILE_PAGES = 5;

const modelNotFound = (model: string) =>
  new NotFoundError(
    `The model \`${model.slice(0, 100)}\` does not exist or you do not have access to it. GET /openai/models lists yours.`,
    'model_not_found',
  );

const ID = /^(?:[a-z][a-z0-9]{23}|c[a-z0-9]{24})$/;

/**
 * The files the model names. Steps: `chat` → none; `library` → every file id of the caller's;
 * `collection:<id>` → the caller's collection's members; `file:<id>` → the caller's file. A
 * collection or file whose files are all still being ingested is a ConflictError (ask again
 * once done), as in a file chat.
 */
export async function resolveModel(deps: ModelDeps, userId: string, model: string): Promise<ModelScope> {
  if (model === 'chat') return { documents: false };
  if (model === 'library') {
    const fileIds: string[] = [];
    for await (const id of userListIds(deps.db, deps.table, userId, 'FILE')) fileIds.push(id);
    return { documents: true, fileIds };
  }
  const [kind, id] = model.split(':', 2) as [string, string | undefined];
  if (!id || !ID.test(id) || model !== `${kind}:${id}`) throw modelNotFound(model);
  let fileIds: string[];
  if (kind === 'collection') {
    ownedBy(await deps.collections.get(id), userId, () => modelNotFound(model));
    fileIds = await deps.collections.memberIds(id);
  } else if (kind === 'file') {
    ownedBy(await deps.files.get(id), userId, () => modelNotFound(model));
    fileIds = [id];
  } else throw modelNotFound(model);
  const files = fileIds.length ? await deps.files.getMany(fileIds) : [];
  if (!files.some((f) => f.status === 'completed') && files.some((f) => f.status !== 'failed')) {
    throw new ConflictError(
      `No file of \`${model}\` is ingested yet: ask again once GET /message/pdf/{fileId} says completed`,
      'FILE_PROCESSING',
    );
  }
  return { documents: true, fileIds };
}

export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** GET /openai/models: `chat`, `library`, the caller's collections and newest completed files. */
export async function listModels(
  deps: ModelDeps,
  userId: string,
  now: Date,
): Promise<{ object: 'list'; data: ModelObject[] }> {
  const service = (id: string): ModelObject => ({
    id,
    object: 'model',
    created: seconds(now.toISOString()),
    owned_by: SERVICE_NAME,
  });
  const data: ModelObject[] = [service('chat'), service('library')];
  let cursor: string | undefined;
  do {
    const page = await deps.collections.listByUser(userId, { limit: 100, ...(cursor && { cursor }) });
    for (const c of page.items)
      data.push({ id: `collection:${c.id}`, object: 'model', created: seconds(c.createdAt), owned_by: userId });
    cursor = encodeCursor(page.lastKey);
  } while (cursor);
  for (let pages = 0; pages < LISTED_FILE_PAGES; pages++) {
    const page = await deps.files.listByUser(userId, { limit: 100, ...(cursor && { cursor }) });
    for (const f of page.items)
      if (f.status === 'completed')
        data.push({ id: `file:${f.id}`, object: 'model', created: seconds(f.createdAt), owned_by: userId });
    cursor = encodeCursor(page.lastKey);
    if (!cursor) break;
  }
  return { object: 'list', data };
}
