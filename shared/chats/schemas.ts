import * as z from '../zod.ts';
import { partLocationSchema } from '../files/schemas.ts';
import { config } from '../config.ts';
import { cuidSchema, idParam, pageQuerySchema } from '../schemas.ts';
import type { NamedSchemas, RouteContracts } from '../openapi/contract.ts';
import { embeddingsDataSchema, FILE_STATUS_EXAMPLE } from '../files/schemas.ts';
import { example, EXAMPLE_IDS as ids, EXAMPLE_TIME as at } from '../openapi/examples.ts';

// Chats and messages: the API's shapes (spec "Chat", "Message") and the request schemas of
// the chat and message routes.

export const DEFAULT_CHAT_NAME = 'New Chat';
export const DEFAULT_SYSTEM_MESSAGE =
  'You are a helpful assistant. Answer clearly and concisely, and say so when you do not know.';
const CHAT_NAME_MAX_CHARS = 200;
const SYSTEM_MESSAGE_MAX_CHARS = 8_000;

const chatTypes = ['text', 'file'] as const;
const chatStatuses = ['active', 'deactivated'] as const;
const messageTypes = ['system', 'user', 'ai'] as const;
const contentTypes = ['file', 'message'] as const;

export type ChatType = (typeof chatTypes)[number];
export type ChatStatus = (typeof chatStatuses)[number];
export type MessageType = (typeof messageTypes)[number];
export type ContentType = (typeof contentTypes)[number];
export const replyStatuses = ['streaming', 'complete', 'stopped', 'failed'] as const;
export type ReplyStatus = (typeof replyStatuses)[number];
export const feedbackRatings = ['up', 'down'] as const;
export type FeedbackRating = (typeof feedbackRatings)[number];
const FEEDBACK_COMMENT_MAX_CHARS = 2_000;

const count = () => z.number().check(z.int(), z.gte(0));

const SOURCE_EXAMPLE = {
  fileId: ids.file,
  fileName: 'paper.pdf',
  page: 2,
  part: 2,
  location: { type: 'page', page: 2 },
  chunk: 3,
  score: 0.82,
  quote: 'Trace trees cover a program by forming one tree per loop.',
  charStart: 412,
  charEnd: 470,
  boxes: [{ x: 0.1176, y: 0.2841, width: 0.6012, height: 0.0152 }],
  verified: true,
  cited: true,
  section: '3 Trace trees > 3.1 Loops',
};
const CHAT_EXAMPLE = {
  id: ids.chat,
  userId: ids.user,
  chatName: 'Reading notes',
  systemMessage: 'You are a helpful assistant. Answer clearly and concisely, and say so when you do not know.',
  createdAt: at,
  updatedAt: at,
  status: 'active',
  type: 'text',
};

const usageSchema = z
  .object({
    promptTokens: count(),
    completionTokens: count(),
    totalTokens: count(),
  })
  .check(example({ promptTokens: 812, completionTokens: 64, totalTokens: 876 }));

const fraction = () => z.number().check(z.gte(0), z.lte(1));
/** A rectangle on a page, as fractions of the page's width and height, origin top-left. */
export const quoteBoxSchema = z
  .object({ x: fraction(), y: fraction(), width: fraction(), height: fraction() })
  .check(example({ x: 0.1176, y: 0.2841, width: 0.6012, height: 0.0152 }));

export const sourceSchema = z
  .object({
    fileId: z.string(),
    fileName: z.optional(z.string()),
    page: z.number().check(z.int(), z.describe("1-based page number (a PDF); another format: the part's number")),
    part: z
      .optional(z.number().check(z.int(), z.gte(1)))
      .check(z.describe('1-based part of the document: GET /files/{fileId}/parts/{part} gives its text')),
    location: z.optional(partLocationSchema),
    chunk: z.number().check(z.int(), z.describe('Chunk index within the file')),
    score: z.number().check(z.describe('Similarity of the passage to the prompt')),
    quote: z.string().check(z.describe('A short passage that appears verbatim in the chunk')),
    cited: z
      .optional(z.boolean())
      .check(
        z.describe('True when the reply cites this passage with its [n] marker (n = its position in sources, from 1)'),
      ),
    ocr: z
      .optional(z.boolean())
      .check(z.describe('True when the page was read by OCR (its text may contain recognition errors)')),
    section: z
      .optional(z.string())
      .check(z.describe('The heading path the passage sits under, outermost first ("2 Methods > 2.1 Data")')),
    charStart: z
      .optional(z.number().check(z.int(), z.gte(0)))
      .check(
        z.describe(
          "Where the quote starts in its part's text (GET /files/{fileId}/parts/{part}; a PDF page's too); set when verified",
        ),
      ),
    charEnd: z
      .optional(z.number().check(z.int(), z.gte(0)))
      .check(z.describe("Where the quote ends (exclusive) in its page's text; set when verified")),
    boxes: z
      .optional(z.array(quoteBoxSchema))
      .check(
        z.describe(
          'Where the quote is drawn on the page: one box per line, fractions of the page, origin top-left (empty when unknown)',
        ),
      ),
    verified: z
      .optional(z.boolean())
      .check(
        z.describe(
          'True when the quote occurs on that page (after normalisation); only verified sources can be cited with [n]',
        ),
      ),
  })
  .check(example(SOURCE_EXAMPLE));
export type SourceRef = z.infer<typeof sourceSchema>;

const FEEDBACK_EXAMPLE = { rating: 'down', comment: 'The quote is not on page 2.', updatedAt: at };

/** The owner's rating of an ai reply (PUT …/feedback); a second PUT replaces it, DELETE removes it. */
const feedbackSchema = z
  .object({
    rating: z.enum(feedbackRatings),
    comment: z.optional(z.string()),
    updatedAt: z.iso.datetime().check(z.describe('When the rating was last set')),
  })
  .check(example(FEEDBACK_EXAMPLE));
export type Feedback = z.infer<typeof feedbackSchema>;

const chatSchema = z
  .object({
    id: z.string(),
    userId: z.string(),
    chatName: z.string(),
    systemMessage: z.string(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    status: z.enum(chatStatuses),
    type: z.enum(chatTypes),
    activeLeafId: z
      .optional(z.string())
      .check(z.describe('The last message of the active branch (absent in a chat with no messages)')),
    collectionId: z
      .optional(z.string())
      .check(z.describe("A file chat bound to a collection: it answers from the collection's files as they are now")),
  })
  .check(example(CHAT_EXAMPLE));
export type Chat = z.infer<typeof chatSchema>;

export const messageSchema = z
  .object({
    id: z.string(),
    chatId: z.string(),
    userId: z.string(),
    message: z.string(),
    messageType: z.enum(messageTypes),
    type: z.enum(contentTypes),
    sequenceNumber: z.number().check(z.int(), z.gte(1)),
    timestamp: z.iso.datetime(),
    parentId: z
      .optional(z.nullable(z.string()))
      .check(z.describe('The message this one follows (null: the first of its branch); set on every listed message')),
    siblingIds: z
      .optional(z.array(z.string()))
      .check(
        z.describe(
          'Listed messages: the ids of the messages that follow the same parent, in creation order, this one included (its alternatives: edits, regenerated replies)',
        ),
      ),
    usage: z.optional(usageSchema).check(z.describe('Token counts of an ai reply')),
    sources: z.optional(z.array(sourceSchema)).check(z.describe('Passages an ai reply in a file chat was given')),
    incomplete: z
      .optional(z.literal(true))
      .check(z.describe('Set on an ai reply that was cut short (stopped, or the model failed mid-reply)')),
    status: z
      .optional(z.enum(replyStatuses))
      .check(
        z.describe(
          'Every ai reply: complete for a whole one; a streamed one is streaming while it is generated (the text so far), then complete, stopped or failed',
        ),
      ),
    feedback: z.optional(feedbackSchema).check(z.describe("The owner's rating of an ai reply, when they gave one")),
  })
  .check(
    example({
      id: ids.reply,
      chatId: ids.fileChat,
      userId: ids.user,
      message: 'The paper describes trace trees: one tree per loop, compiled to native code [1].',
      messageType: 'ai',
      type: 'message',
      sequenceNumber: 2,
      timestamp: at,
      parentId: ids.userMessage,
      siblingIds: [ids.reply],
      usage: { promptTokens: 812, completionTokens: 64, totalTokens: 876 },
      sources: [SOURCE_EXAMPLE],
      status: 'complete',
      feedback: FEEDBACK_EXAMPLE,
    }),
  );
export type Message = z.infer<typeof messageSchema>;

const trimmed = (max: number) => z.string().check(z.trim(), z.minLength(1), z.maxLength(max));

export const createChatBody = z
  .strictObject({
    name: z.optional(trimmed(CHAT_NAME_MAX_CHARS)),
    type: z.enum(chatTypes),
    systemMessage: z.optional(trimmed(SYSTEM_MESSAGE_MAX_CHARS)),
    collectionId: z
      .optional(cuidSchema)
      .check(
        z.describe(
          'A file chat only: a collection of the caller; the chat answers from its completed files, those added later included',
        ),
      ),
  })
  .check(example({ name: 'Reading notes', type: 'file', collectionId: ids.collection }));

export const updateChatBody = z
  .strictObject({
    name: z.optional(trimmed(CHAT_NAME_MAX_CHARS)),
    chatName: z.optional(trimmed(CHAT_NAME_MAX_CHARS)).check(z.describe('Same as name (the field the responses use)')),
    systemMessage: z.optional(trimmed(SYSTEM_MESSAGE_MAX_CHARS)),
    status: z.optional(z.enum(chatStatuses)),
    activeLeafId: z
      .optional(cuidSchema)
      .check(
        z.describe(
          'A message of the chat: its branch becomes the active one (running on to the newest message under it)',
        ),
      ),
  })
  .check(
    z.refine((b) => Object.values(b).some((v) => v !== undefined), {
      message: 'Give at least one of name (or chatName), systemMessage, status, activeLeafId',
    }),
    z.refine((b) => b.name === undefined || b.chatName === undefined || b.name === b.chatName, {
      message: 'name and chatName differ; give one of them',
      path: ['chatName'],
    }),
    example({ name: 'Paper club', status: 'active' }),
  );

/** A chat as GET /chat/{chatId} answers it: with the files attached to it and their status. */
const chatWithFilesSchema = z
  .object({
    ...chatSchema.shape,
    files: z
      .array(embeddingsDataSchema)
      .check(z.describe('The files attached to the chat, in the order they were attached')),
  })
  .check(example({ ...CHAT_EXAMPLE, id: ids.fileChat, type: 'file', files: [FILE_STATUS_EXAMPLE] }));

export const chatIdParams = z.strictObject({ chatId: idParam('chat') });
export const replyParams = z.strictObject({ chatId: idParam('chat'), messageId: idParam('reply') });
export const followReplyQuery = z.strictObject({
  after: z
    .optional(
      z.coerce
        .number()
        .check(
          z.int(),
          z.gte(0),
          z.lte(999_999_999),
          z.describe('The id of the last event the client had (as Last-Event-ID)'),
        ),
    )
    .check(example(7)),
});

export const listQuery = pageQuerySchema;
export const listMessagesQuery = z.strictObject({
  ...pageQuerySchema.shape,
  leaf: z
    .optional(cuidSchema)
    .check(
      z.describe('Read the branch through this message (to the newest message under it) instead of the active one'),
      example(ids.reply),
    ),
});

export const feedbackBody = z
  .strictObject({
    rating: z.enum(feedbackRatings),
    comment: z.optional(
      z
        .string()
        .check(
          z.trim(),
          z.maxLength(FEEDBACK_COMMENT_MAX_CHARS),
          z.describe(`Why; trimmed, at most ${FEEDBACK_COMMENT_MAX_CHARS} characters (blank: no comment)`),
        ),
    ),
  })
  .check(example({ rating: 'down', comment: 'The quote is not on page 2.' }));

/** Characters of a search query (docs/DECISIONS.md, Chat search). */
export const SEARCH_QUERY_MAX_CHARS = 200;

export const searchQuery = z
  .strictObject({
    q: z
      .string()
      .check(
        z.trim(),
        z.minLength(1),
        z.maxLength(SEARCH_QUERY_MAX_CHARS),
        z.describe(
          `Words to find (every one must match), at most ${SEARCH_QUERY_MAX_CHARS} characters; the first 8 distinct terms count. ` +
            'Case and accents are ignored; Chinese and Japanese text is matched by character pairs (日本 finds 日本語の文章).',
        ),
        example('trace trees'),
      ),
    ...pageQuerySchema.shape,
  })
  .check(example({ q: 'trace trees', limit: 20 }));

const searchHitSchema = z
  .object({
    chatId: z.string(),
    chatName: z.string(),
    messageId: z.nullable(z.string()).check(z.describe('The matching message; null when the chat name matched')),
    snippet: z.string().check(z.describe('The text around the first match (at most 160 characters, … where cut)')),
    timestamp: z.iso.datetime().check(z.describe("The message's time (the chat's creation for a name match)")),
  })
  .check(
    example({
      chatId: ids.fileChat,
      chatName: 'Paper club',
      messageId: ids.reply,
      snippet: 'The paper describes trace trees: one tree per loop, compiled to native code [1].',
      timestamp: at,
    }),
  );

export const sendMessageBody = z
  .strictObject({
    // The cap is a setting (PROMPT_MAX_CHARS), read at validation time, not at import.
    prompt: z.string().check(
      z.describe('The prompt; not blank, at most PROMPT_MAX_CHARS characters (default 16000)'),
      z.superRefine((p, ctx) => {
        if (p.trim().length === 0) ctx.addIssue({ code: 'custom', message: 'Must not be empty' });
        const max = config().PROMPT_MAX_CHARS;
        if (p.length > max) ctx.addIssue({ code: 'custom', message: `Must be at most ${max} characters` });
      }),
    ),
    chatId: cuidSchema,
    parentId: z
      .optional(z.nullable(cuidSchema))
      .check(
        z.describe(
          "The reply the prompt follows (null: start again at the root); default the chat's active leaf. An earlier prompt's parent edits it into a new branch",
        ),
      ),
    stream: z._default(z.boolean(), false),
  })
  .check(example({ chatId: ids.fileChat, prompt: 'What is this paper about?', stream: false }));

export const regenerateBody = z
  .strictObject({ stream: z._default(z.boolean(), false) })
  .check(example({ stream: true }));

const replySchema = z
  .object({
    response: z.string().check(z.describe("The assistant's reply")),
    usage: usageSchema,
    sources: z
      .optional(z.array(sourceSchema))
      .check(z.describe('File chats: the passages the reply was given, best first')),
    messageId: z.string().check(z.describe('Id of the stored ai message')),
    userMessageId: z.string().check(z.describe('Id of the stored user message (the prompt) this reply answers')),
    sequenceNumber: z.number().check(z.int(), z.describe('Sequence number of the stored ai message')),
    status: z
      .literal('complete')
      .check(z.describe('Status of the stored ai message: a whole reply is answered once it is complete')),
    chatName: z
      .optional(z.string())
      .check(z.describe("The chat's new title, when this first exchange of a chat created without a name gave it one")),
  })
  .check(
    example({
      response: 'The paper describes trace trees: one tree per loop, compiled to native code [1].',
      usage: { promptTokens: 812, completionTokens: 64, totalTokens: 876 },
      sources: [SOURCE_EXAMPLE],
      messageId: ids.reply,
      userMessageId: ids.userMessage,
      sequenceNumber: 2,
      status: 'complete',
    }),
  );

/** The first event of a streamed reply (`event: start`): which prompt it answers, and the reply's id. */
const streamStartSchema = z
  .object({
    chatId: z.string(),
    userMessageId: z.string().check(z.describe('Id of the stored user message (the prompt)')),
    userSequenceNumber: z.number().check(z.int()),
    messageId: z.string().check(z.describe('Id the reply is stored under once it completes')),
  })
  .check(example({ chatId: ids.chat, userMessageId: ids.userMessage, userSequenceNumber: 1, messageId: ids.reply }));

/** One model delta of a streamed reply (an unnamed event). */
const streamDeltaSchema = z.object({ content: z.string() }).check(example({ content: 'The paper describes' }));

/** The named component schemas of the OpenAPI document. */
export const schemas: NamedSchemas = {
  Chat: chatSchema,
  ChatWithFiles: chatWithFilesSchema,
  Message: messageSchema,
  Source: sourceSchema,
  Usage: usageSchema,
  Reply: replySchema,
  StreamStartEvent: streamStartSchema,
  StreamDeltaEvent: streamDeltaSchema,
  CreateChatRequest: createChatBody,
  UpdateChatRequest: updateChatBody,
  SendMessageRequest: sendMessageBody,
  RegenerateRequest: regenerateBody,
  Feedback: feedbackSchema,
  FeedbackRequest: feedbackBody,
};

const pagingHeaders = ['x-next-cursor'];

export const contracts: RouteContracts = {
  'create-chat': {
    summary: 'Create a chat session',
    description: `name defaults to "${DEFAULT_CHAT_NAME}"; systemMessage has a default; type is text or file. A file chat with collectionId answers from that collection's completed files as they are at each prompt (404: not a collection of the caller's).`,
    body: createChatBody,
    responses: { 201: chatSchema },
    errors: [400, 401, 404],
  },
  'list-chats': {
    summary: "The caller's chats, newest first",
    query: listQuery,
    responses: { 200: z.array(chatSchema) },
    errors: [400, 401],
    headers: pagingHeaders,
  },
  'search-chats': {
    summary: "Search the caller's chats: names and messages holding every word of q, newest first",
    description:
      'One entry per matching message (messageId set) or chat name (messageId null). Paged: when more may follow, the ' +
      'x-next-cursor header holds the cursor of the next page. A page can hold fewer than limit entries (even none) and ' +
      'still have a cursor: each request reads a bounded part of the index. 400 for an empty or over-long q, or a q ' +
      'without a searchable word.',
    query: searchQuery,
    responses: { 200: z.array(searchHitSchema) },
    errors: [400, 401],
    headers: pagingHeaders,
  },
  'get-chat': {
    summary: 'One chat, with the files attached to it and their status',
    params: chatIdParams,
    responses: { 200: chatWithFilesSchema },
    errors: [400, 401, 404],
  },
  'update-chat': {
    summary: 'Rename a chat, change its system message, deactivate or reactivate it, switch its active branch',
    description:
      'The new name goes in name or chatName (the field the responses use); a chat the user named is never retitled. ' +
      'activeLeafId: a message of the chat; the branch through it (to the newest message under it) becomes the active ' +
      'one, and the next prompt without parentId follows it (400 when it is not a message of the chat).',
    params: chatIdParams,
    body: updateChatBody,
    responses: { 200: chatSchema },
    errors: [400, 401, 404],
  },
  'delete-chat': {
    summary: 'Delete a chat with all its messages and attachments',
    params: chatIdParams,
    responses: {
      200: z.object({ id: z.string(), deleted: z.literal(true) }).check(example({ id: ids.chat, deleted: true })),
    },
    errors: [400, 401, 404],
  },
  'list-messages': {
    summary: "A branch of a chat's messages, root first: the active one, or the one through ?leaf=",
    description:
      'Messages form a tree: each has parentId (null for the first) and siblingIds (the messages that follow the same ' +
      'parent, in creation order, itself included: edits of a prompt, regenerated replies). ?leaf={messageId} reads the ' +
      'branch through that message, to the newest message under it; PUT /chat/{chatId} { activeLeafId } makes it the ' +
      "active one. The newest reply's branch is active. 400 when leaf is not a message of the chat.",
    params: chatIdParams,
    query: listMessagesQuery,
    responses: { 200: z.array(messageSchema) },
    errors: [400, 401, 404],
    headers: pagingHeaders,
  },
  'send-message': {
    summary: 'Send a prompt to the assistant; the reply whole or streamed',
    description:
      'stream false: 200 with data { response, messageId, userMessageId, sequenceNumber, status: complete, usage, sources? }; in a file chat the reply cites sources as [n] ' +
      '(n = position in sources, from 1; markers naming no source are removed) and each source says whether it is `cited`. ' +
      'stream true: text/event-stream, every event with `id: n` (1, 2, … within the reply): first `event: start` with { chatId, userMessageId, userSequenceNumber, messageId } (the stored prompt and the reply, stored as it grows with status streaming); ' +
      'in a file chat `event: sources` next (before any delta that cites them), then one ' +
      '`data: {"content":"…"}` event per model delta, `event: citations` with `{ cited: [n, …] }` (file chats), `event: usage`, ' +
      '`event: stopped` after a stop (POST …/stop), `event: error` + `data: {"message":"…"}` on a failure after the stream began, and always `data: [DONE]` last. ' +
      'The generation goes on when the client goes away; resume at GET /chat/{chatId}/messages/{messageId}/stream with Last-Event-ID. ' +
      'A `: keep-alive` comment is sent while the model is quiet. 400 for a deactivated chat; 409 for a file chat whose PDFs are all still being processed. ' +
      "parentId: the message the prompt follows (an ai message, or null: the root; default the chat's active leaf); " +
      "an earlier prompt's parentId edits it into a new branch, which becomes the active one; 400 when parentId is a prompt or not in the chat. " +
      "403 for a stranger's chat, but 404 (as for a missing chat) when the prompt names a parentId in it. " +
      'The first complete exchange of a chat created without a name titles it: `chatName` in the reply, `event: title` with { chatName } after `usage` in the stream.',
    body: sendMessageBody,
    responses: { 200: replySchema },
    errors: [400, 401, 403, 404, 409, 429, 502, 504],
    streams: true,
  },
  'regenerate-reply': {
    summary: 'A new reply to the prompt of an ai message (a sibling of it), whole or streamed',
    description:
      'The same responses as POST /message/logged-in (stream false: the reply; stream true: the event stream, resumable and ' +
      "stoppable), answering the prompt again with the history of its own branch. The new reply's branch becomes the active " +
      "one; the regenerated message stays, a sibling. 400 when the message is not an ai reply to a prompt; 404 for a stranger's chat or an unknown message.",
    params: replyParams,
    body: regenerateBody,
    responses: { 200: replySchema },
    errors: [400, 401, 404, 409, 429, 502, 504],
    streams: true,
  },
  'follow-reply': {
    summary: 'Resume a streamed reply: the events after the last one the client had, then the live generation',
    description:
      "text/event-stream, the same events as the reply's stream under the same ids (`id: n`). Send Last-Event-ID " +
      '(or ?after=n) with the id of the last event received: the events after it are replayed from storage, then those the ' +
      'generation stores next (wherever it runs) follow until the reply ends: `event: usage` (and `event: stopped` when it was ' +
      "stopped) or `event: error`, then `data: [DONE]`. A finished reply is replayed and ended. 404 for a stranger's chat or " +
      'a message that is not a streamed reply. 429 with Retry-After past the requests per minute, or when the reply ' +
      '(REPLY_MAX_FOLLOWERS) or the caller (FOLLOWS_MAX_IN_FLIGHT_PER_USER) already has as many streams open as allowed: ' +
      'a stream counts until the reply ends or the client leaves.',
    params: replyParams,
    query: followReplyQuery,
    responses: { 200: null },
    errors: [400, 401, 404, 429],
    streams: 'only',
  },
  'stop-reply': {
    summary: 'Stop a reply being generated',
    description:
      'The generation ends within a second wherever it runs; the reply is stored as far as it got, status stopped, its ' +
      'tokens counted; every open stream of it ends with `event: stopped` and `[DONE]`. 200 with the message as stored. ' +
      'Stopping a finished reply changes nothing.',
    params: replyParams,
    responses: { 200: messageSchema },
    errors: [400, 401, 404],
  },
  'put-feedback': {
    summary: 'Rate an ai reply up or down, with an optional comment',
    description:
      'The chat owner rates one of its ai replies (whatever its status, streaming included); a second PUT replaces the ' +
      'first. 200 with the message as stored, `feedback` set. 400 (errors[0].code NOT_AN_AI_REPLY) for a user message ' +
      "or a file attachment; 404 for a stranger's chat or an unknown message.",
    params: replyParams,
    body: feedbackBody,
    responses: { 200: messageSchema },
    errors: [400, 401, 404],
  },
  'delete-feedback': {
    summary: 'Remove the rating of an ai reply',
    description:
      '200 with the message as stored, without `feedback`; removing a rating that is not there changes nothing (200). ' +
      "400 (errors[0].code NOT_AN_AI_REPLY) for a user message or a file attachment; 404 for a stranger's chat or an unknown message.",
    params: replyParams,
    responses: { 200: messageSchema },
    errors: [400, 401, 404],
  },
};
