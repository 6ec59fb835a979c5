import * as z from '../zod.ts';
import { partLocationSchema } from '../files/schemas.ts';
import { example, EXAMPLE_IDS as ids, EXAMPLE_TIME as at } from '../openapi/examples.ts';
import { chatStatuses, chatTypes, contentTypes, feedbackRatings, messageTypes, replyStatuses } from './requests.ts';

// Chats and messages: the API's shapes (spec "Chat", "Message"), and the request schemas of the
// chat and message routes (requests.ts, re-exported for the contracts).

export * from './requests.ts';
const count = () => z.number().check(z.int(), z.gte(0));

export const SOURCE_EXAMPLE = {
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
export const CHAT_EXAMPLE = {
  id: ids.chat,
  userId: ids.user,
  chatName: 'Reading notes',
  systemMessage: 'You are a helpful assistant. Answer clearly and concisely, and say so when you do not know.',
  createdAt: at,
  updatedAt: at,
  status: 'active',
  type: 'text',
};

export const usageSchema = z
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
export const feedbackSchema = z
  .object({
    rating: z.enum(feedbackRatings),
    comment: z.optional(z.string()),
    updatedAt: z.iso.datetime().check(z.describe('When the rating was last set')),
  })
  .check(example(FEEDBACK_EXAMPLE));
export type Feedback = z.infer<typeof feedbackSchema>;

export const chatSchema = z
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
