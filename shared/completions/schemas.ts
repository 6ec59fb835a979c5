import * as z from '../zod.ts';
import { example, EXAMPLE_IDS as ids } from '../openapi/examples.ts';

// The OpenAI-compatible API (GET /openai/models, POST /openai/chat/completions): OpenAI's request
// body and objects, as its clients send and read them (docs/DECISIONS.md "OpenAI-compatible API").
// Fields OpenAI defines that do not change the answer here (`user`, `top_p`, `seed`, …) are
// accepted and ignored, as a client sends them unasked; those whose meaning cannot be kept
// (tools, several choices) are refused.

const MODEL_MAX_CHARS = 100;
const MESSAGES_MAX = 500;

const textPart = z.looseObject({ type: z.literal('text'), text: z.string() });

const messageSchema = z.looseObject({
  role: z
    .enum(['system', 'developer', 'user', 'assistant'])
    .check(z.describe('system and developer messages instruct; user and assistant turns are the conversation')),
  content: z.union([z.string(), z.array(textPart), z.null()]),
  name: z.optional(z.string()),
});

export const chatCompletionBody = z
  .looseObject({
    model: z
      .string()
      .check(
        z.minLength(1),
        z.maxLength(MODEL_MAX_CHARS),
        z.describe(
          'What the answer draws on: `chat` (no documents), `library` (all your files), `collection:<id>` or `file:<id>` (GET /openai/models lists them)',
        ),
      ),
    messages: z
      .array(messageSchema)
      .check(
        z.minLength(1),
        z.maxLength(MESSAGES_MAX),
        z.describe('The conversation, oldest first; the last message is the user turn answered'),
      ),
    stream: z.optional(z.nullable(z.boolean())),
    stream_options: z.optional(
      z.nullable(
        z.looseObject({
          include_usage: z
            .optional(z.boolean())
            .check(z.describe('A last chunk with `usage` and empty `choices` before [DONE]')),
        }),
      ),
    ),
    max_completion_tokens: z
      .optional(z.nullable(z.number().check(z.int(), z.gte(1))))
      .check(
        z.describe(
          "The longest reply in tokens, at most the service's REPLY_MAX_TOKENS (a larger value is lowered to it)",
        ),
      ),
    max_tokens: z
      .optional(z.nullable(z.number().check(z.int(), z.gte(1))))
      .check(z.describe('Older name of max_completion_tokens')),
    temperature: z.optional(z.nullable(z.number().check(z.gte(0), z.lte(2)))),
    n: z.optional(z.nullable(z.literal(1, 'Only one choice (n = 1) is generated'))),
    tools: z.optional(z.array(z.unknown()).check(z.maxLength(0, 'Tools are not supported'))),
  })
  .check(
    example({
      model: `file:${ids.file}`,
      messages: [
        { role: 'system', content: 'Answer in one sentence.' },
        { role: 'user', content: 'How are loops compiled?' },
      ],
      stream: false,
    }),
  );

export type ChatCompletionBody = z.infer<typeof chatCompletionBody>;
