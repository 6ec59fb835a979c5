import * as z from '../zod.ts';
import { chatIdParams, messageSchema } from '../chats/schemas.ts';
import { doneSchema, byId, type NamedSchemas, type RouteContracts } from '../openapi/contract.ts';
import { example, EXAMPLE_IDS as ids, EXAMPLE_TIME as at } from '../openapi/examples.ts';
import { SHARE_ID_EXAMPLE, exportQuery, shareIdParams } from './schemas.ts';

// The OpenAPI contracts of the sharing routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

/** A message as the API shows it, without its owner and chat (the export names the chat once). */
const { userId: _owner, chatId: _chat, ...exportedMessageShape } = messageSchema.shape;

const QUOTE = 'Trace trees cover a program by forming one tree per loop.';

const citationSchema = z
  .object({
    n: z.number().check(z.int(), z.gte(1), z.describe('The [n] marker the reply cites the passage with')),
    fileName: z.optional(z.string()),
    page: z.number().check(z.int(), z.describe('1-based page number')),
    quote: z.string().check(z.describe('A short passage that appears verbatim in the document')),
  })
  .check(example({ n: 1, fileName: 'paper.pdf', page: 2, quote: QUOTE }));

const deletedCitationSchema = z
  .object({
    n: z.number().check(z.int(), z.gte(1), z.describe('The [n] marker the reply cites the passage with')),
    deleted: z
      .literal(true)
      .check(z.describe('The cited file was deleted after the reply: its name, page and quote are no longer shown')),
  })
  .check(example({ n: 2, deleted: true }));

/** The JSON export: the chat, and its active branch's messages with their sources and citations. */
const exportedChatSchema = z
  .object({
    format: z.literal('chat-export/1'),
    exportedAt: z.iso.datetime(),
    chat: z.object({
      id: z.string(),
      name: z.string(),
      type: z.enum(['text', 'file']),
      status: z.enum(['active', 'deactivated']),
      systemMessage: z.string(),
      createdAt: z.iso.datetime(),
      updatedAt: z.iso.datetime(),
    }),
    messages: z.array(
      z.object({
        ...exportedMessageShape,
        citations: z.array(citationSchema).check(z.describe('The sources the reply cites (cited: true), by marker')),
      }),
    ),
  })
  .check(
    example({
      format: 'chat-export/1',
      exportedAt: at,
      chat: {
        id: ids.fileChat,
        name: 'Reading notes',
        type: 'file',
        status: 'active',
        systemMessage: 'You are a helpful assistant.',
        createdAt: at,
        updatedAt: at,
      },
      messages: [
        {
          id: ids.reply,
          message: 'The paper describes trace trees [1].',
          messageType: 'ai',
          type: 'message',
          sequenceNumber: 2,
          timestamp: at,
          sources: [
            { fileId: ids.file, fileName: 'paper.pdf', page: 2, chunk: 3, score: 0.82, quote: QUOTE, cited: true },
          ],
          citations: [{ n: 1, fileName: 'paper.pdf', page: 2, quote: QUOTE }],
        },
      ],
    }),
  );

const shareCreatedSchema = z
  .object({
    shareId: z.string().check(z.describe('128 random bits, base64url')),
    url: z.string().check(z.describe('Where anyone can read the snapshot (GET /shared/{shareId}, no sign-in)')),
  })
  .check(
    example({
      shareId: SHARE_ID_EXAMPLE,
      url: `https://example.execute-api.us-east-1.amazonaws.com/api/v1/shared/${SHARE_ID_EXAMPLE}`,
    }),
  );

const sharedMessageSchema = z
  .object({
    role: z.enum(['user', 'assistant']),
    text: z.string(),
    timestamp: z.iso.datetime(),
    citations: z.optional(
      z
        .array(z.union([citationSchema, deletedCitationSchema]))
        .check(z.describe('The passages the reply cites; one of a file deleted since shows only its marker')),
    ),
    incomplete: z.optional(z.literal(true)).check(z.describe('A reply that was stopped or failed before its end')),
  })
  .check(
    example({
      role: 'assistant',
      text: 'The paper describes trace trees [1].',
      timestamp: at,
      citations: [{ n: 1, fileName: 'paper.pdf', page: 2, quote: QUOTE }],
    }),
  );

const sharedChatSchema = z
  .object({
    shareId: z.string(),
    chatName: z.string(),
    sharedAt: z.iso.datetime(),
    messages: z.array(sharedMessageSchema),
  })
  .check(
    example({
      shareId: SHARE_ID_EXAMPLE,
      chatName: 'Reading notes',
      sharedAt: at,
      messages: [
        { role: 'user', text: 'What is this paper about?', timestamp: at },
        {
          role: 'assistant',
          text: 'The paper describes trace trees [1].',
          timestamp: at,
          citations: [{ n: 1, fileName: 'paper.pdf', page: 2, quote: QUOTE }],
        },
      ],
    }),
  );

export const schemas: NamedSchemas = {
  Citation: citationSchema,
  DeletedCitation: deletedCitationSchema,
  ExportedChat: exportedChatSchema,
  ShareCreated: shareCreatedSchema,
  SharedChat: sharedChatSchema,
  SharedMessage: sharedMessageSchema,
};

export const contracts: RouteContracts = {
  'export-chat': {
    summary: 'Download a chat (its active branch) as Markdown or JSON',
    description:
      'An attachment (`content-disposition: attachment; filename="…"; filename*=UTF-8\'\'…`, named after the chat). ' +
      'markdown: the chat name, then who said what and when, each reply followed by the passages it cites (file name, page, quote); ' +
      'message text is escaped, so it shows literally. json: ExportedChat. The file is streamed as it is written. ' +
      "400 for another format; 404 for a stranger's chat.",
    ...byId(chatIdParams),
    query: exportQuery,
    responses: { 200: null },
    attachment: { 'text/markdown': null, 'application/json': exportedChatSchema },
  },
  'share-chat': {
    summary: 'Share a read-only snapshot of a chat (its active branch as it is now)',
    description:
      'Anyone with the url reads it without signing in: the chat name and the messages (role, text, time, cited passages with ' +
      'file name, page and quote); no ids, emails or file URLs. A cited file deleted later (or before sharing) shows only ' +
      '`{ n, deleted: true }`, and verbatim copies of its quotes and name leave the reply text. One live share per chat: sharing again replaces the snapshot ' +
      'under a new id, and the old link answers 404. 409 (SHARE_TOO_LARGE) when the snapshot exceeds SHARE_MAX_BYTES.',
    ...byId(chatIdParams, 409),
    responses: { 201: shareCreatedSchema },
  },
  'revoke-share': {
    summary: 'Stop sharing a chat (its link answers 404 from now on; deleting the chat does the same)',
    ...byId(chatIdParams),
    responses: { 200: doneSchema({ shareId: SHARE_ID_EXAMPLE }, 'revoked') },
  },
  'get-shared-chat': {
    summary: 'Read a shared chat (no sign-in)',
    description:
      'No Authorization. Limited per source IP (RATE_LIMIT_SHARED_READS_PER_MINUTE; 429 with Retry-After). ' +
      '404 for an id that was revoked, replaced, belongs to a deleted chat, or could not have been issued. ' +
      'A citation of a file deleted since the share was made is `{ n, deleted: true }`: no file name, page or quote.',
    params: shareIdParams,
    responses: { 200: sharedChatSchema },
    errors: [404, 429],
  },
};
