import * as z from '../zod.ts';
import { doneSchema, byId, pageOf, type NamedSchemas, type RouteContracts } from '../openapi/contract.ts';
import { embeddingsDataSchema, FILE_STATUS_EXAMPLE } from '../files/schemas.ts';
import { example, EXAMPLE_IDS as ids, EXAMPLE_TIME as at } from '../openapi/examples.ts';
import {
  DEFAULT_CHAT_NAME,
  SOURCE_EXAMPLE,
  CHAT_EXAMPLE,
  usageSchema,
  sourceSchema,
  feedbackSchema,
  chatSchema,
  messageSchema,
  createChatBody,
  updateChatBody,
  chatIdParams,
  replyParams,
  followReplyQuery,
  listQuery,
  listMessagesQuery,
  feedbackBody,
  searchQuery,
  sendMessageBody,
  regenerateBody,
} from './schemas.ts';

// The OpenAPI contracts of the chats routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

/** A chat as GET /chat/{chatId} answers it: with the files attached to it and their status. */
const chatWithFilesSchema = z
  .object({
    ...chatSchema.shape,
    files: z
      .array(embeddingsDataSchema)
      .check(z.describe('The files attached to the chat, in the order they were attached')),
  })
  .check(example({ ...CHAT_EXAMPLE, id: ids.fileChat, type: 'file', files: [FILE_STATUS_EXAMPLE] }));

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
    ...pageOf(chatSchema),
    errors: [400, 401],
  },
  'search-chats': {
    summary: "Search the caller's chats: names and messages holding every word of q, newest first",
    description:
      'One entry per matching message (messageId set) or chat name (messageId null). Paged: when more may follow, the ' +
      'x-next-cursor header holds the cursor of the next page. A page can hold fewer than limit entries (even none) and ' +
      'still have a cursor: each request reads a bounded part of the index. 400 for an empty or over-long q, or a q ' +
      'without a searchable word.',
    query: searchQuery,
    ...pageOf(searchHitSchema),
    errors: [400, 401],
  },
  'get-chat': {
    summary: 'One chat, with the files attached to it and their status',
    ...byId(chatIdParams),
    responses: { 200: chatWithFilesSchema },
  },
  'update-chat': {
    summary: 'Rename a chat, change its system message, deactivate or reactivate it, switch its active branch',
    description:
      'The new name goes in name or chatName (the field the responses use); a chat the user named is never retitled. ' +
      'activeLeafId: a message of the chat; the branch through it (to the newest message under it) becomes the active ' +
      'one, and the next prompt without parentId follows it (400 when it is not a message of the chat).',
    ...byId(chatIdParams),
    body: updateChatBody,
    responses: { 200: chatSchema },
  },
  'delete-chat': {
    summary: 'Delete a chat with all its messages and attachments',
    ...byId(chatIdParams),
    responses: { 200: doneSchema({ id: ids.chat }) },
  },
  'list-messages': {
    summary: "A branch of a chat's messages, root first: the active one, or the one through ?leaf=",
    description:
      'Messages form a tree: each has parentId (null for the first) and siblingIds (the messages that follow the same ' +
      'parent, in creation order, itself included: edits of a prompt, regenerated replies). ?leaf={messageId} reads the ' +
      'branch through that message, to the newest message under it; PUT /chat/{chatId} { activeLeafId } makes it the ' +
      "active one. The newest reply's branch is active. 400 when leaf is not a message of the chat.",
    ...byId(chatIdParams),
    query: listMessagesQuery,
    ...pageOf(messageSchema),
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
    ...byId(replyParams, 409, 429, 502, 504),
    body: regenerateBody,
    responses: { 200: replySchema },
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
    ...byId(replyParams, 429),
    query: followReplyQuery,
    responses: { 200: null },
    streams: 'only',
  },
  'stop-reply': {
    summary: 'Stop a reply being generated',
    description:
      'The generation ends within a second wherever it runs; the reply is stored as far as it got, status stopped, its ' +
      'tokens counted; every open stream of it ends with `event: stopped` and `[DONE]`. 200 with the message as stored. ' +
      'Stopping a finished reply changes nothing.',
    ...byId(replyParams),
    responses: { 200: messageSchema },
  },
  'put-feedback': {
    summary: 'Rate an ai reply up or down, with an optional comment',
    description:
      'The chat owner rates one of its ai replies (whatever its status, streaming included); a second PUT replaces the ' +
      'first. 200 with the message as stored, `feedback` set. 400 (errors[0].code NOT_AN_AI_REPLY) for a user message ' +
      "or a file attachment; 404 for a stranger's chat or an unknown message.",
    ...byId(replyParams),
    body: feedbackBody,
    responses: { 200: messageSchema },
  },
  'delete-feedback': {
    summary: 'Remove the rating of an ai reply',
    description:
      '200 with the message as stored, without `feedback`; removing a rating that is not there changes nothing (200). ' +
      "400 (errors[0].code NOT_AN_AI_REPLY) for a user message or a file attachment; 404 for a stranger's chat or an unknown message.",
    ...byId(replyParams),
    responses: { 200: messageSchema },
  },
};
