import { createId } from '../ids.ts';
import { unreportedUsage } from '../ai/prompt.ts';
import { estimateMessageTokens } from '../ai/tokens.ts';
import type { AiProvider, ChatInput, ChatTurn, Source, Usage } from '../ai/types.ts';
import { CitationStream, checkCitations, citableSources } from '../chats/replies/citations.ts';
import { replyCostBound } from '../chats/replies/reply-cost.ts';
import { ReplyLength } from '../chats/replies/reply-length.ts';
import { addUsage, retrievalQuery } from '../chats/replies/retrieval-query.ts';
import { DEFAULT_SYSTEM_MESSAGE } from '../chats/requests.ts';
import { releaseReplySlot, settle, takeReplySlot, type Spent } from '../chats/replies/reply-budget.ts';
import {
  DEFAULT_CHUNK_TOKENS,
  DEFAULT_RETRIEVAL_K,
  deadlineError,
  deadlineOf,
  failureMessage,
  type SendMessageDeps,
} from '../chats/replies/reply-request.ts';
import type { Clock } from '../clock.ts';
import { InvalidInputError, TimedOutError, asError } from '../errors.ts';
import type { TokenReservation } from '../limits/user-limits.ts';
import type { HeldSlot } from '../limits/in-flight-slots.ts';
import { logger } from '../observability/logger.ts';
import type { RetrieveInput } from '../retrieval/retrieve.ts';
import { resolveModel, type ModelDeps, type ModelScope } from './models.ts';
import type { ChatCompletionBody } from './schemas.ts';

// POST /openai/chat/completions (docs/DECISIONS.md "OpenAI-compatible API"): OpenAI's request in,
// OpenAI's objects out, answered by the reply machinery of the chats (shared/chats/): the same
// provider, retrieval (the follow-up rewrite, hybrid search), prompt, citation checks, reply
// length, per-user limits and token budget as a file chat's reply. Nothing is stored: the
// conversation is the request's, as OpenAI's API has it.

export interface CompletionDeps extends ModelDeps, Pick<SendMessageDeps, 'budget' | 'usage'> {
  provider: AiProvider;
  retrieve: (input: RetrieveInput) => Promise<Source[]>;
  clock: Clock;
  settings: {
    replyMaxTokens: number;
    historyTokenBudget: number;
    promptMaxChars: number;
    retrievalK?: number;
    chunkTokens?: number;
  };
}

export interface CompletionRequest {
  userId: string;
  body: ChatCompletionBody;
  /** What the invocation has left (the model call ends a margin before). */
  remainingMs?: number | undefined;
}

type FinishReason = 'stop' | 'length';

export interface Citation {
  index: number;
  fileId: string;
  fileName: string;
  part?: number;
  location?: unknown;
  page?: number;
  quote: string;
  verified: boolean;
  cited: boolean;
}

const openAiUsage = (u: Usage) => ({
  prompt_tokens: u.promptTokens,
  completion_tokens: u.completionTokens,
  total_tokens: u.totalTokens,
});

/** A source as a citation: its number, file, place and quote (`part`/`location` when the source has them). */
function citationOf(source: Source, i: number, cited: Set<number>): Citation {
  const { part, location } = source as Source & { part?: number; location?: unknown };
  return {
    index: i + 1,
    fileId: source.fileId,
    fileName: source.fileName ?? '',
    ...(part !== undefined && { part }),
    ...(location !== undefined && { location }),
    ...(source.page !== undefined && { page: source.page }),
    quote: source.quote,
    verified: source.verified === true,
    cited: cited.has(i + 1),
  };
}

const textOf = (content: ChatCompletionBody['messages'][number]['content']): string =>
  typeof content === 'string' ? content : (content ?? []).map((p) => p.text).join('\n');

/**
 * The request's messages as the chat input: system and developer messages joined (the service's
 * default when there are none), the turns with consecutive ones of a role merged (some providers
 * refuse two in a row), the last user turn the prompt, and the history the newest turns that fit
 * the token budget (oldest dropped first, as a chat's history).
 */
function conversation(deps: CompletionDeps, body: ChatCompletionBody) {
  const system = body.messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => textOf(m.content))
    .join('\n\n');
  const turns: ChatTurn[] = [];
  for (const m of body.messages) {
    if (m.role !== 'user' && m.role !== 'assistant') continue;
    const content = textOf(m.content);
    const last = turns.at(-1);
    if (last?.role === m.role) last.content += `\n\n${content}`;
    else turns.push({ role: m.role, content });
  }
  const last = turns.pop();
  if (last?.role !== 'user' || !last.content.trim())
    throw new InvalidInputError('The last message must be a user message with text', [
      { path: 'body.messages', message: 'Must end with a user message' },
    ]);
  if (last.content.length > deps.settings.promptMaxChars)
    throw new InvalidInputError(`The last user message is longer than ${deps.settings.promptMaxChars} characters`, [
      { path: `body.messages.${body.messages.length - 1}.content`, message: 'Too long' },
    ]);
  const history: ChatTurn[] = [];
  let used = 0;
  for (const turn of turns.reverse()) {
    const cost = estimateMessageTokens(turn.content);
    if (used + cost > deps.settings.historyTokenBudget) break;
    used += cost;
    history.unshift(turn);
  }
  return { system: system.trim() || DEFAULT_SYSTEM_MESSAGE, history, prompt: last.content };
}

interface Begun {
  model: string;
  input: ChatInput;
  sources?: Source[];
  queryUsage?: Usage;
  spent: Spent;
  reservation?: TokenReservation;
  slot?: HeldSlot;
}

/**
 * Everything before the model call, every refusal first. Steps: the model's files → the
 * conversation → a reply slot and the reply's most likely cost reserved (as a chat's reply) → in
 * a document model, the retrieval query (a follow-up rewritten) and the best passages.
 */
async function begin(deps: CompletionDeps, req: CompletionRequest): Promise<Begun> {
  const { body } = req;
  const scope: ModelScope = await resolveModel(deps, req.userId, body.model);
  const { system, history, prompt } = conversation(deps, body);
  const { replyMaxTokens } = deps.settings;
  const asked = body.max_completion_tokens ?? body.max_tokens ?? replyMaxTokens;
  const base = {
    system,
    history,
    prompt,
    maxTokens: Math.min(asked, replyMaxTokens),
    ...(typeof body.temperature === 'number' && { temperature: body.temperature }),
    ...(scope.documents && { fileChat: true }),
  };
  const k = deps.settings.retrievalK ?? DEFAULT_RETRIEVAL_K;
  const slot = await takeReplySlot(deps, req);
  let reservation: TokenReservation | undefined;
  try {
    const bound = replyCostBound(
      base,
      scope.documents
        ? {
            k,
            chunkTokens: deps.settings.chunkTokens ?? DEFAULT_CHUNK_TOKENS,
            rewrite: deps.provider.name !== 'offline',
          }
        : undefined,
    );
    reservation = await deps.budget?.reserveTokens(req.userId, bound);
  } catch (err) {
    await releaseReplySlot(deps, slot);
    throw err;
  }
  const spent: Spent = { userId: req.userId, tokens: 0, embedded: 0 };
  if (!scope.documents) return { model: body.model, input: base, spent, reservation, slot };
  try {
    const deadlineMs = deadlineOf(req);
    const signal = deadlineMs ? AbortSignal.timeout(deadlineMs) : undefined;
    const { query, usage } = await retrievalQuery(deps.provider, history, prompt, signal);
    spent.tokens += usage?.totalTokens ?? 0;
    const sources = await deps.retrieve({
      fileIds: scope.fileIds,
      prompt: query,
      provider: deps.provider,
      k,
      onEmbedded: (tokens) => {
        spent.tokens += tokens;
        spent.embedded += tokens;
      },
    });
    return { model: body.model, input: { ...base, sources }, sources, queryUsage: usage, spent, reservation, slot };
  } catch (err) {
    await settle(deps, reservation, spent.tokens, spent);
    await releaseReplySlot(deps, slot);
    throw deadlineError(err);
  }
}

const completionId = () => `chatcmpl-${createId()}`;
const nowSeconds = (clock: Clock) => Math.floor(clock().getTime() / 1000);

/** `length` when the reply was cut at its length (by the model or by ReplyLength), else `stop`. */
const finishReasonOf = (cut: boolean, usage: Usage | undefined, maxTokens: number): FinishReason =>
  cut || (usage !== undefined && usage.completionTokens >= maxTokens) ? 'length' : 'stop';

/**
 * The whole completion. Steps: begin (above) → the model's reply within the deadline → what fits
 * its length → markers naming no verified passage removed → the budget settled → OpenAI's
 * `chat.completion` with `citations`.
 */
export async function createCompletion(deps: CompletionDeps, req: CompletionRequest) {
  const begun = await begin(deps, req);
  const { input, sources, spent, reservation } = begun;
  try {
    let result: { text: string; usage: Usage };
    try {
      const deadlineMs = deadlineOf(req);
      result = await deps.provider.reply({ ...input, ...(deadlineMs && { signal: AbortSignal.timeout(deadlineMs) }) });
    } catch (err) {
      await settle(deps, reservation, unreportedUsage(input, '', err).totalTokens + spent.tokens, spent);
      throw deadlineError(err);
    }
    const length = new ReplyLength(input.maxTokens);
    let text = length.take(result.text);
    let cited = new Set<number>();
    if (sources) ({ text, cited } = checkCitations(text, citableSources(sources)));
    await settle(deps, reservation, result.usage.totalTokens + spent.tokens, spent);
    const usage = addUsage(result.usage, begun.queryUsage);
    return {
      id: completionId(),
      object: 'chat.completion' as const,
      created: nowSeconds(deps.clock),
      model: begun.model,
      choices: [
        {
          index: 0 as const,
          message: { role: 'assistant' as const, content: text, refusal: null },
          logprobs: null,
          finish_reason: finishReasonOf(length.full, result.usage, input.maxTokens),
        },
      ],
      usage: openAiUsage(usage),
      citations: (sources ?? []).map((s, i) => citationOf(s, i, cited)),
    };
  } finally {
    await releaseReplySlot(deps, begun.slot);
  }
}

/** One `data:` event of a streamed completion. */
interface ChunkEvent {
  data: unknown;
}

/**
 * The streamed completion: begin (every refusal before the first byte, as JSON in OpenAI's shape),
 * then a source of `chat.completion.chunk` events: the role, one chunk per model delta (checked
 * for markers, cut at the reply's length), the finish reason, then (with
 * `stream_options.include_usage`) the usage chunk with no choices; `citations` ride on the last
 * chunk. A client that goes away aborts the model call (nothing is stored to finish). A failure
 * after the first byte is an `error` object, which OpenAI's clients raise.
 */
export async function streamCompletion(deps: CompletionDeps, req: CompletionRequest) {
  const begun = await begin(deps, req);
  const { input, sources, spent, reservation, model } = begun;
  const id = completionId();
  const created = nowSeconds(deps.clock);
  const includeUsage = req.body.stream_options?.include_usage === true;
  const chunk = (choice: object | undefined, extra: object = {}): ChunkEvent => ({
    data: {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: choice ? [{ index: 0, logprobs: null, finish_reason: null, ...choice }] : [],
      ...(includeUsage && { usage: null }),
      ...extra,
    },
  });
  return {
    open: async function* (clientGone: AbortSignal): AsyncGenerator<ChunkEvent> {
      const citations = sources ? new CitationStream(citableSources(sources)) : undefined;
      const length = new ReplyLength(input.maxTokens);
      const deadlineMs = deadlineOf(req);
      const signal = deadlineMs ? AbortSignal.any([clientGone, AbortSignal.timeout(deadlineMs)]) : clientGone;
      let text = '';
      let usage: Usage | undefined;
      let failure: unknown;
      try {
        yield chunk({ delta: { role: 'assistant', content: '' } });
        for await (const part of deps.provider.streamReply({ ...input, signal })) {
          if (part.type !== 'delta') {
            usage = part.usage;
            continue;
          }
          const kept = length.take(part.text);
          const out = citations ? citations.push(kept) : kept;
          text += kept;
          if (out) yield chunk({ delta: { content: out } });
          if (length.full) break;
        }
        const tail = citations?.end();
        if (tail) yield chunk({ delta: { content: tail } });
        if (signal.aborted && !clientGone.aborted)
          failure = new TimedOutError('The reply took too long and was cut short');
      } catch (err) {
        if (!clientGone.aborted) failure = deadlineError(err);
      } finally {
        const used = usage ?? unreportedUsage(input, text, failure);
        await settle(deps, reservation, used.totalTokens + spent.tokens, spent);
        await releaseReplySlot(deps, begun.slot);
      }
      if (failure !== undefined) {
        logger.warn('streamed completion failed', { message: asError(failure).message });
        yield { data: { error: { message: failureMessage(failure), type: 'server_error', param: null, code: null } } };
        return;
      }
      if (clientGone.aborted) return;
      const cited = (sources ?? []).map((s, i) => citationOf(s, i, citations?.cited ?? new Set()));
      const finish = { delta: {}, finish_reason: finishReasonOf(length.full, usage, input.maxTokens) };
      const total = openAiUsage(addUsage(usage ?? unreportedUsage(input, text, undefined), begun.queryUsage));
      if (!includeUsage) {
        yield chunk(finish, { citations: cited });
        return;
      }
      yield chunk(finish);
      yield chunk(undefined, { usage: total, citations: cited });
    },
  };
}
