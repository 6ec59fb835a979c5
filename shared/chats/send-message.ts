import { Readable } from 'node:stream';
import { AiProviderError, clientMessage } from '../ai/errors.ts';
import { estimateUsage } from '../ai/prompt.ts';
import { estimateTokens } from '../ai/tokens.ts';
import type { TokenReservation } from '../limits/user-limits.ts';
import type { AiProvider, ChatInput, Source, Usage } from '../ai/types.ts';
import { BadGatewayError, BadRequestError, ForbiddenError, HttpError, NotFoundError, ServiceUnavailableError } from '../http/errors.ts';
import { logger } from '../logger.ts';
import type { RetrieveInput } from '../retrieval/retrieve.ts';
import type { ChatRepository } from './chat-repository.ts';
import { fitHistory } from './history.ts';
import type { MessageRepository } from './message-repository.ts';
import type { Chat, Message, SourceRef } from './schemas.ts';
import { SSE_DONE, sseComment, sseData, sseEvent } from './sse.ts';

// POST /message/logged-in: a prompt in, the assistant's reply out, whole or as an event stream.

/** The user's daily token budget (shared/limits/user-limits.ts). */
export interface TokenBudget {
  reserveTokens(userId: string, tokens: number): Promise<TokenReservation | undefined>;
  settle(reservation: TokenReservation | undefined, usedTokens: number): Promise<void>;
}

export interface SendMessageDeps {
  chats: ChatRepository;
  messages: MessageRepository;
  provider: AiProvider;
  retrieve: (input: RetrieveInput) => Promise<Source[]>;
  /** Absent: no budget (tests of other concerns). */
  budget?: TokenBudget;
  settings: {
    historyTokenBudget: number;
    replyMaxTokens: number;
    /** A `: keep-alive` comment goes out when the model has been quiet this long. */
    heartbeatMs: number;
    /** Passages retrieved for a file chat. */
    retrievalK?: number;
  };
}

export interface SendMessageRequest {
  userId: string;
  chatId: string;
  prompt: string;
  /** The model call is abandoned after this many ms (the function's remaining time, less a margin). */
  deadlineMs?: number;
}

export interface Reply {
  response: string;
  usage: Usage;
  sources?: SourceRef[];
  messageId: string;
  sequenceNumber: number;
}

interface Prepared {
  chat: Chat;
  userMessage: Message;
  input: ChatInput;
  sources?: SourceRef[];
}

const DEFAULT_RETRIEVAL_K = 6;

/** What a client is shown of a source: everything but the chunk's full text. */
const toRef = ({ text: _text, ...ref }: Source): SourceRef => ref;

/** An AI failure as the HTTP error of a request that has not started streaming. */
function httpErrorFor(err: unknown): unknown {
  if (err instanceof AiProviderError) {
    if (err.kind === 'timeout') return new HttpError(504, clientMessage(err));
    if (err.kind === 'rate-limited') return new ServiceUnavailableError(clientMessage(err), err.details.retryAfterSeconds ?? 5);
    return new BadGatewayError(clientMessage(err));
  }
  if ((err as Error)?.name === 'APIUserAbortError' || (err as Error)?.name === 'AbortError') {
    return new HttpError(504, 'The reply took too long');
  }
  return err;
}

/**
 * Everything before the model call; every client error (404, 403, 400) is found here.
 * Steps: load the chat (404 unknown, 403 someone else's, 400 deactivated) → store the user's
 * message (its sequence number from the chat's counter) → in a file chat, retrieve the best
 * passages → read the history that fits the token budget, oldest dropped first.
 */
async function prepare(deps: SendMessageDeps, req: SendMessageRequest): Promise<Prepared> {
  const chat = await deps.chats.get(req.chatId);
  if (!chat) throw new NotFoundError('Chat not found');
  if (chat.userId !== req.userId) throw new ForbiddenError('You do not have access to this chat');
  if (chat.status === 'deactivated') {
    throw new BadRequestError('This chat is deactivated; reactivate it (PUT /chat/{chatId} with status "active") to send prompts', undefined, 'CHAT_DEACTIVATED');
  }
  const userMessage = await deps.messages.append({
    chatId: chat.id,
    userId: req.userId,
    message: req.prompt,
    messageType: 'user',
    type: 'message',
  });
  const fileChat = chat.type === 'file';
  let sources: Source[] | undefined;
  if (fileChat) {
    try {
      sources = await deps.retrieve({ chatId: chat.id, prompt: req.prompt, provider: deps.provider, k: deps.settings.retrievalK ?? DEFAULT_RETRIEVAL_K });
    } catch (err) {
      throw httpErrorFor(err);
    }
  }
  const history = await fitHistory(deps.messages.newestFirst(chat.id, userMessage.sequenceNumber), deps.settings.historyTokenBudget);
  const input: ChatInput = {
    system: chat.systemMessage,
    history,
    prompt: req.prompt,
    maxTokens: deps.settings.replyMaxTokens,
    ...(fileChat && { fileChat, sources: sources ?? [] }),
  };
  return { chat, userMessage, input, ...(sources && { sources: sources.map(toRef) }) };
}

/**
 * Holds the reply's likely cost against the user's daily budget before anything is stored (a
 * 429 then changes nothing): the prompt's estimate plus the longest reply. Settled to the real
 * usage once the reply is known.
 */
async function reserve(deps: SendMessageDeps, req: SendMessageRequest) {
  return deps.budget?.reserveTokens(req.userId, estimateTokens(req.prompt) + deps.settings.replyMaxTokens);
}

/** Settles a reservation; a failure here must not lose a reply already generated. */
async function settle(deps: SendMessageDeps, reservation: TokenReservation | undefined, usedTokens: number) {
  await deps.budget?.settle(reservation, usedTokens).catch((err: unknown) => logger.error('could not settle the token budget', { error: err as Error }));
}

/**
 * The reply in one piece.
 * Steps: reserve tokens (429 when the daily budget cannot hold them) → prepare (above) → call
 * the model (within the deadline) → settle the budget to the real usage → store the reply with
 * its usage and sources → return it. A model failure leaves the user's message stored, unanswered.
 */
export async function sendMessage(deps: SendMessageDeps, req: SendMessageRequest): Promise<Reply> {
  const reservation = await reserve(deps, req);
  let result: { text: string; usage: Usage };
  let prepared: Prepared;
  try {
    prepared = await prepare(deps, req);
    result = await deps.provider.reply({ ...prepared.input, ...(req.deadlineMs && { signal: AbortSignal.timeout(req.deadlineMs) }) });
  } catch (err) {
    await settle(deps, reservation, 0);
    throw httpErrorFor(err);
  }
  await settle(deps, reservation, result.usage.totalTokens);
  const { chat, sources } = prepared;
  const stored = await deps.messages.append({
    chatId: chat.id,
    userId: req.userId,
    message: result.text,
    messageType: 'ai',
    type: 'message',
    usage: result.usage,
    ...(sources && { sources }),
  });
  return {
    response: result.text,
    usage: result.usage,
    ...(sources && { sources }),
    messageId: stored.id,
    sequenceNumber: stored.sequenceNumber,
  };
}

export interface StreamedReply {
  stream: Readable;
  /** Settles when the reply is stored and the stream ended (also after the client went away). */
  finished: Promise<void>;
}

/**
 * The reply as Server-Sent Events (DESIGN §7). Client errors (and the 429 of a spent token
 * budget) are thrown before the stream exists, so they are ordinary JSON responses.
 * Steps: reserve tokens → prepare (above) → open the stream → one `data: {"content"}` event per model delta, a
 * `: keep-alive` comment whenever the model is quiet for `heartbeatMs` → store the reply (what
 * was generated, marked incomplete, when the model failed or the client left) → `event: sources`
 * (file chats) and `event: usage`, or `event: error` after a failure → `data: [DONE]`.
 * The client going away destroys the stream, which aborts the model call.
 */
export async function streamMessage(deps: SendMessageDeps, req: SendMessageRequest): Promise<StreamedReply> {
  const reservation = await reserve(deps, req);
  let prepared: Prepared;
  try {
    prepared = await prepare(deps, req);
  } catch (err) {
    await settle(deps, reservation, 0);
    throw err;
  }
  const { chat, input, sources } = prepared;
  const clientGone = new AbortController();
  const signals = [clientGone.signal, ...(req.deadlineMs ? [AbortSignal.timeout(req.deadlineMs)] : [])];
  const signal = signals.length > 1 ? AbortSignal.any(signals) : clientGone.signal;

  let open = true;
  let heartbeat: NodeJS.Timeout | undefined;
  const out = new Readable({
    read() {},
    destroy(err, callback) {
      open = false;
      clearTimeout(heartbeat);
      clientGone.abort();
      callback(err);
    },
  });
  const armHeartbeat = () => {
    clearTimeout(heartbeat);
    heartbeat = setTimeout(() => push(sseComment('keep-alive')), deps.settings.heartbeatMs);
  };
  const push = (text: string) => {
    if (!open) return;
    out.push(text);
    armHeartbeat();
  };

  const run = async () => {
    let text = '';
    let usage: Usage | undefined;
    let failure: unknown;
    armHeartbeat(); // the model may be quiet before its first token too
    try {
      for await (const part of deps.provider.streamReply({ ...input, signal })) {
        if (part.type === 'delta') {
          text += part.text;
          push(sseData({ content: part.text }));
        } else usage = part.usage;
      }
      if (signal.aborted && !clientGone.signal.aborted) failure = new HttpError(504, 'The reply took too long and was cut short');
    } catch (err) {
      failure = err;
    }
    const interrupted = failure !== undefined || clientGone.signal.aborted;
    // What the model produced is paid for, however the stream ended.
    await settle(deps, reservation, usage?.totalTokens ?? (text ? estimateUsage(input, text).totalTokens : 0));
    if (failure && !(failure instanceof AiProviderError) && !(failure instanceof HttpError)) {
      logger.error('streamed reply failed', { error: failure as Error });
    } else if (failure) {
      logger.warn('streamed reply failed', { message: (failure as Error).message });
    }
    if (text || !interrupted) {
      try {
        await deps.messages.append({
          chatId: chat.id,
          userId: req.userId,
          message: text,
          messageType: 'ai',
          type: 'message',
          usage: usage ?? estimateUsage(input, text),
          ...(sources && { sources }),
          ...(interrupted && { incomplete: true }),
        });
      } catch (err) {
        logger.error('could not store the streamed reply', { error: err as Error });
        failure ??= new Error('The reply could not be saved');
      }
    }
    if (failure) {
      const message =
        failure instanceof AiProviderError ? clientMessage(failure) : failure instanceof HttpError ? failure.message : 'The reply failed';
      push(sseEvent('error', { message }));
    } else if (!clientGone.signal.aborted) {
      if (sources) push(sseEvent('sources', sources));
      push(sseEvent('usage', usage ?? estimateUsage(input, text)));
    }
    push(SSE_DONE);
    clearTimeout(heartbeat);
    if (open) out.push(null);
  };
  const finished = run().catch((err) => {
    logger.error('stream failed', { error: err as Error });
    if (open) out.destroy(err as Error);
  });
  return { stream: out, finished };
}
