import * as z from '../zod.ts';
import type { NamedSchemas, RouteContracts } from '../openapi/contract.ts';
import { example, EXAMPLE_IDS as ids } from '../openapi/examples.ts';
import { chatCompletionBody } from './schemas.ts';

// The OpenAPI contracts of the completions routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

const CITATION_EXAMPLE = {
  index: 1,
  fileId: ids.file,
  fileName: 'paper.pdf',
  page: 2,
  quote: 'Trace trees cover a program by forming one tree per loop.',
  verified: true,
  cited: true,
};

const citationSchema = z
  .looseObject({
    index: z.number().check(z.int(), z.describe('The n of `[n]` in the content')),
    fileId: z.string(),
    fileName: z.string(),
    part: z.optional(
      z.number().check(z.int(), z.describe('1-based part of the document (page, slide, sheet, section)')),
    ),
    location: z.optional(
      z.unknown().check(z.describe('Where the part is: a page, slide, sheet range or section path')),
    ),
    page: z.optional(z.number().check(z.int(), z.describe('1-based page (PDFs)'))),
    quote: z.string().check(z.describe('A short passage that appears verbatim in the file')),
    verified: z
      .boolean()
      .check(z.describe('The quote was found on that page or part (only verified passages can be cited)')),
    cited: z.boolean().check(z.describe('The content cites it as [index]')),
  })
  .check(example(CITATION_EXAMPLE));

const usageSchema = z.object({
  prompt_tokens: z.number().check(z.int()),
  completion_tokens: z.number().check(z.int()),
  total_tokens: z.number().check(z.int()),
});

const CREATED = 1_795_000_000;
const USAGE_EXAMPLE = { prompt_tokens: 412, completion_tokens: 38, total_tokens: 450 };

const chatCompletionSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().check(z.int(), z.describe('Unix seconds')),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.literal(0),
        message: z.object({
          role: z.literal('assistant'),
          content: z.string(),
          refusal: z.null(),
        }),
        logprobs: z.null(),
        finish_reason: z.enum(['stop', 'length']),
      }),
    ),
    usage: usageSchema,
    citations: z
      .array(citationSchema)
      .check(z.describe('The passages the answer was given; `[n]` in the content cites index n')),
  })
  .check(
    example({
      id: 'chatcmpl-m4n8p2q6r9s3t7v1w5x0y4za',
      object: 'chat.completion',
      created: CREATED,
      model: `file:${ids.file}`,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'One tree per loop [1].', refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: USAGE_EXAMPLE,
      citations: [CITATION_EXAMPLE],
    }),
  );

const chunkSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion.chunk'),
    created: z.number().check(z.int()),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.literal(0),
        delta: z.object({ role: z.optional(z.literal('assistant')), content: z.optional(z.string()) }),
        logprobs: z.null(),
        finish_reason: z.nullable(z.enum(['stop', 'length'])),
      }),
    ),
    usage: z.optional(z.nullable(usageSchema)),
    citations: z.optional(z.array(citationSchema).check(z.describe('On the last chunk before [DONE]'))),
  })
  .check(
    example({
      id: 'chatcmpl-m4n8p2q6r9s3t7v1w5x0y4za',
      object: 'chat.completion.chunk',
      created: CREATED,
      model: 'library',
      choices: [{ index: 0, delta: { content: 'One tree' }, logprobs: null, finish_reason: null }],
    }),
  );

const modelSchema = z
  .object({
    id: z.string(),
    object: z.literal('model'),
    created: z.number().check(z.int()),
    owned_by: z.string(),
  })
  .check(example({ id: `collection:${ids.collection}`, object: 'model', created: CREATED, owned_by: ids.user }));

const modelListSchema = z.object({ object: z.literal('list'), data: z.array(modelSchema) }).check(
  example({
    object: 'list',
    data: [
      { id: 'chat', object: 'model', created: CREATED, owned_by: 'chat-orders-pdf-service' },
      { id: 'library', object: 'model', created: CREATED, owned_by: 'chat-orders-pdf-service' },
    ],
  }),
);

export const schemas: NamedSchemas = {
  ChatCompletionRequest: chatCompletionBody,
  ChatCompletion: chatCompletionSchema,
  ChatCompletionChunk: chunkSchema,
  CompletionCitation: citationSchema,
  Model: modelSchema,
};

export const contracts: RouteContracts = {
  'openai-list-models': {
    summary: 'The models a completion can name: chat, library, and each collection and completed file of yours',
    description:
      "OpenAI's model list (`client.models.list()`). `chat` answers without documents; `library` from all your files; " +
      '`collection:<id>` and `file:<id>` from one collection or file (files listed: your newest completed ones). ' +
      "Takes an API key (scope read) or a service token; errors in OpenAI's shape.",
    responses: { 200: modelListSchema },
    errors: [401, 403],
  },
  'openai-chat-completions': {
    summary: 'OpenAI chat completions, answered from your documents with citations',
    description:
      "OpenAI's body and objects: point an OpenAI client at `<base>/openai` with an API key (scope chat) as its key. " +
      'The answer draws on what `model` names; `citations` (top level, and on the last chunk before `[DONE]` when ' +
      'streamed) are the passages it was given, `[n]` in the content citing index n. Streamed: `data: {chunk}` lines, ' +
      'a last usage chunk with empty `choices` when `stream_options.include_usage`, then `data: [DONE]`; a failure after ' +
      'the stream began is a `data: {"error": {…}}` line. Errors are `{ error: { message, type, param, code } }`: 400 ' +
      'invalid_request_error, 401 invalid_api_key, 403 (a key without the scope), 404 model_not_found (also another ' +
      "user's collection or file), 409 (files still processing), 429 rate_limit_exceeded or insufficient_quota. Counts " +
      "against the messages rate limit, the replies in flight and the daily token budget of the key's user.",
    body: chatCompletionBody,
    responses: { 200: chatCompletionSchema },
    streams: true,
    errors: [400, 401, 403, 404, 409, 413, 415, 429, 502, 503, 504],
  },
};
