import '../config/chat.ts';
import * as z from '../zod.ts';
import { config } from '../config.ts';
import { cuidSchema, idParam, pageQuerySchema } from '../schemas.ts';
import { example, EXAMPLE_IDS as ids } from '../openapi/examples.ts';

// The request schemas of the chat and message routes, and the names and bounds the code reads:
// what the functions build at cold start. The API's response shapes are in schemas.ts, which
// only the OpenAPI contracts build (a function's code imports their types alone).

export const DEFAULT_CHAT_NAME = 'New Chat';
export const DEFAULT_SYSTEM_MESSAGE =
  'You are a helpful assistant. Answer clearly and concisely, and say so when you do not know.';
export const CHAT_NAME_MAX_CHARS = 200;
export const SYSTEM_MESSAGE_MAX_CHARS = 8_000;

export const chatTypes = ['text', 'file'] as const;
export const chatStatuses = ['active', 'deactivated'] as const;
export const messageTypes = ['system', 'user', 'ai'] as const;
export const contentTypes = ['file', 'message'] as const;

export type ChatType = (typeof chatTypes)[number];
export type ChatStatus = (typeof chatStatuses)[number];
export type MessageType = (typeof messageTypes)[number];
export type ContentType = (typeof contentTypes)[number];
export const replyStatuses = ['streaming', 'complete', 'stopped', 'failed'] as const;
export type ReplyStatus = (typeof replyStatuses)[number];
export const feedbackRatings = ['up', 'down'] as const;
export type FeedbackRating = (typeof feedbackRatings)[number];
export const FEEDBACK_COMMENT_MAX_CHARS = 2_000;

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
