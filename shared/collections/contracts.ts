import * as z from '../zod.ts';
import { doneSchema, byId, pageOf, type NamedSchemas, type RouteContracts } from '../openapi/contract.ts';
import { embeddingsDataSchema, FILE_STATUS_EXAMPLE } from '../files/schemas.ts';
import { example, EXAMPLE_IDS as ids, EXAMPLE_TIME as at } from '../openapi/examples.ts';
import {
  createCollectionBody,
  updateCollectionBody,
  collectionParams,
  collectionFileParams,
  listCollectionsQuery,
} from './schemas.ts';

// The OpenAPI contracts of the collections routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

// Collections of files: the API's shapes and the request schemas of the collection routes.

const COLLECTION_EXAMPLE = {
  id: ids.collection,
  userId: ids.user,
  name: 'Compilers',
  fileCount: 1,
  createdAt: at,
  updatedAt: at,
};

export const collectionSchema = z
  .object({
    id: z.string(),
    userId: z.string(),
    name: z.string(),
    fileCount: z.number().check(z.int(), z.gte(0), z.describe('Files in the collection')),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .check(example(COLLECTION_EXAMPLE));

const collectionFileSchema = z
  .object({
    ...embeddingsDataSchema.shape,
    addedAt: z.iso.datetime().check(z.describe('When the file joined the collection')),
  })
  .check(example({ ...FILE_STATUS_EXAMPLE, collectionIds: [ids.collection], addedAt: at }));

const membershipSchema = z
  .object({ collectionId: z.string(), fileId: z.string(), added: z.boolean() })
  .check(example({ collectionId: ids.collection, fileId: ids.file, added: true }));

export const schemas: NamedSchemas = {
  Collection: collectionSchema,
  CollectionFile: collectionFileSchema,
  CreateCollectionRequest: createCollectionBody,
  UpdateCollectionRequest: updateCollectionBody,
};

export const contracts: RouteContracts = {
  'create-collection': {
    summary: 'Create a collection of files',
    description:
      'A named group of the caller\'s files; a file chat can be bound to it (POST /chat { type: "file", collectionId }) ' +
      'and POST /search can be limited to it. 409 COLLECTION_LIMIT past COLLECTIONS_MAX_PER_USER.',
    body: createCollectionBody,
    responses: { 201: collectionSchema },
    errors: [400, 401, 409],
  },
  'list-collections': {
    summary: "The caller's collections, newest first",
    query: listCollectionsQuery,
    ...pageOf(collectionSchema),
    errors: [400, 401],
  },
  'get-collection': {
    summary: 'One collection',
    ...byId(collectionParams),
    responses: { 200: collectionSchema },
  },
  'update-collection': {
    summary: 'Rename a collection',
    ...byId(collectionParams),
    body: updateCollectionBody,
    responses: { 200: collectionSchema },
  },
  'delete-collection': {
    summary: 'Delete a collection (its files stay)',
    description: 'File chats bound to it then search no file.',
    ...byId(collectionParams),
    responses: { 200: doneSchema({ id: ids.collection }) },
  },
  'add-collection-file': {
    summary: 'Put a file of the caller in a collection',
    description:
      'Idempotent: a file already in it answers added: false. Any status: the file is searched once completed. ' +
      '409 COLLECTION_FULL past COLLECTION_MAX_FILES.',
    ...byId(collectionFileParams, 409),
    responses: { 200: membershipSchema },
  },
  'remove-collection-file': {
    summary: 'Take a file out of a collection (the file stays)',
    description: '404 when the file is not in the collection.',
    ...byId(collectionFileParams),
    responses: { 200: doneSchema({ collectionId: ids.collection, fileId: ids.file }, 'removed') },
  },
  'list-collection-files': {
    summary: "A collection's files with their status, by file id",
    ...byId(collectionParams),
    query: listCollectionsQuery,
    ...pageOf(collectionFileSchema),
  },
};
