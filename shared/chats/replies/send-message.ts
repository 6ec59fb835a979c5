import { createId } from '@paralleldrive/cuid2';
import { AiProviderError, clientMessage } from '../../ai/errors.ts';
import { estimateUsage, unreportedUsage } from '../../ai/prompt.ts';
import { isoNow, type Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { TokenReservation, UserLimits } from '../../limits/user-limits.ts';
import type { HeldSlot } from '../../limits/in-flight-slots.ts';
import type { AiProvider, ChatInput, ChatTurn, Source, Usage } from '../../ai/types.ts';
import {
  AccessDeniedError,
  ConflictError,
  DomainError,
  InvalidInputError,
  NotFoundError,
  TimedOutError,
  asError,
  errorName,
} from '../../errors.ts';
import { describeProgress } from '../../files/chat-files.ts';
import { collectionFileIds, filesOfChat, type ChatScopeDeps } from '../conversations/chat-files-of.ts';
import { logger } from '../../observability/logger.ts';
import type { RetrieveInput } from '../../retrieval/retrieve.ts';
import { notInChat } from '../conversations/branch.ts';
import type { ChatRecord, ChatRepository } from '../conversations/chat-repository.ts';
import { chatTitle } from '../conversations/chat-title.ts';
import type { MessageTree } from '../conversations/message-tree.ts';
import { CitationStream, checkCitations, citableSources } from './citations.ts';
import { fitHistory } from './history.ts';
import type { MessageRepository } from '../conversations/message-repository.ts';
import { addUsage, retrievalQuery } from './retrieval-query.ts';
import { replyCostBound } from './reply-cost.ts';
import type { Chat, Message, ReplyStatus, SourceRef } from '../schemas.ts';
import { closingEvents, firstDeltaId, openingEvents, type ReplyEvent, type ReplyStream } from './reply-events.ts';
import { ReplyLength } from './reply-length.ts';
import type { UsageLedger } from '../../limits/usage-ledger.ts';
import type { ReplyRepository, ReplyState } from './reply-repository.ts';

// POST /message/logged-in and POST …/regenerate: a prompt in (new, or stored and answered again),
// the assistant's reply out, whole or as an event stream.

/** The user's daily token budget and replies in flight (shared/limits/user-limits.ts). */
type ReplyLimits = Pick<UserLimits, 'reserveTokens' | 'settle' | 'takeInFlight' | 'releaseInFlight'>;

export interface SendMessageDeps {
  /** Absent: no limits (tests of other concerns). */
  budget?: ReplyLimits;
  /** The user's usage counters (tokens by model); absent: not counted. */
  usage?: Pick<UsageLedger, 'addTokens'>;
  chats: ChatRepository;
  messages: MessageRepository;
  replies: ReplyRepository;
  provider: AiProvider;
  retrieve: (input: RetrieveInput) => Promise<Source[]>;
  /** A file chat's files: attached, or its collection's (a prompt is refused while none is ready yet). */
  files: ChatScopeDeps;
  clock: Clock;
  settings: ReplySettings;
}

interface ReplySettings {
  historyTokenBudget: number;
  replyMaxTokens: number;
  /** Passages retrieved for a file chat. */
  retrievalK?: number;
  /** The largest passage (a chunk), for the reservation of a file chat's reply. */
  chunkTokens?: number;
  /** A streamed reply's generator writes at least this often, so readers can tell it is alive. */
  replyHeartbeatMs: number;
}

export const replySettings = (config: Config): ReplySettings => ({
  historyTokenBudget: config.HISTORY_TOKEN_BUDGET,
  replyMaxTokens: config.REPLY_MAX_TOKENS,
  retrievalK: config.RETRIEVAL_K,
  chunkTokens: config.CHUNK_TOKENS,
  replyHeartbeatMs: heartbeatMs(config.REPLY_STALE_MS),
});

/** The generator beats three times within the time after which a reader takes it for dead. */
const heartbeatMs = (staleMs: number) => Math.max(500, Math.floor(staleMs / 3));

interface TurnRequest {
  userId: string;
  chatId: string;
  /** What the invocation has left: the model call is abandoned a margin before (to store the reply and end the stream). */
  remainingMs?: number;
}

/** A new prompt (POST /message/logged-in). */
export interface SendMessageRequest extends TurnRequest {
  prompt: string;
  /** The message the prompt follows (null: the root); absent: the chat's active leaf. */
  parentId?: string | null;
}

/** A stored reply answered again: a sibling reply to the same prompt (POST …/regenerate). */
export interface RegenerateRequest extends TurnRequest {
  messageId: string;
}

type ReplyRequest = SendMessageRequest | RegenerateRequest;

/** Time kept after the model call to store the reply and close the stream. */
const DEADLINE_MARGIN_MS = 5_000;
/** When the model call is abandoned: a margin before the invocation ends (at least a second). */
export const deadlineOf = (req: Pick<TurnRequest, 'remainingMs'>) =>
  req.remainingMs ? Math.max(1_000, req.remainingMs - DEADLINE_MARGIN_MS) : undefined;

export interface Reply {
  response: string;
  /** The stored user message the reply answers. */
  userMessageId: string;
  usage: Usage;
  sources?: SourceRef[];
  messageId: string;
  sequenceNumber: number;
  /** The stored ai message's status: a whole reply is answered once it is complete. */
  status: 'complete';
  /** The chat's new title, when this first exchange gave it one. */
  chatName?: string;
}

interface Prepared {
  chat: ChatRecord;
  /** The prompt the reply answers (stored just now, or earlier for a regenerated reply). */
  userMessage: Message;
  input: ChatInput;
  sources?: SourceRef[];
  /** Tokens spent before the reply (the follow-up rewrite), added to the reply's usage. */
  queryUsage?: Usage;
  /** Tokens spent before the reply and charged, whatever it becomes (the rewrite, the query's embedding). */
  spent: Spent;
}

/** Tokens spent while preparing a reply, counted as they are (a failure later still charges them). */
export interface Spent {
  userId: string;
  tokens: number;
  /** Of `tokens`, those of the query's embedding (the embedding model's; the rest are the chat model's). */
  embedded: number;
}

/** The history a prompt will be sent with, read before the prompt is stored (for the reservation). */
interface Sending {
  parentId: string | null;
  history: ChatTurn[];
}

export const DEFAULT_RETRIEVAL_K = 6;
export const DEFAULT_CHUNK_TOKENS = 800;

/**
 * A file chat whose files are all still being ingested cannot answer from them yet: say so (ConflictError)
 * before anything is stored, rather than reply that no document matched.
 */
async function assertFilesReady(deps: SendMessageDeps, chat: ChatRecord): Promise<void> {
  const files = await filesOfChat(deps.files, chat);
  if (files.some((f) => f.status === 'completed')) return;
  const pending = files.filter((f) => f.status === 'processing' || f.status === 'uploaded');
  if (!pending.length) return;
  const list = pending.map((f) => `"${f.fileName}" (${describeProgress(f)})`).join(', ');
  throw new ConflictError(
    `This chat's PDF is still being processed: ${list}. Ask again once GET /message/pdf/{fileId} says completed.`,
    'FILE_PROCESSING',
  );
}

/** What a client is shown of a source: everything but the chunk's full text. */
const toRef = ({ text: _text, ...ref }: Source): SourceRef => ref;

/** The sources with `cited` set on those the reply's [n] markers name (n counts from 1). */
const flagCited = (sources: SourceRef[], cited: Set<number>): SourceRef[] =>
  sources.map((s, i) => ({ ...s, cited: cited.has(i + 1) }));

/** A call abandoned at the request's deadline, as the domain's timeout; other errors as they are. */
export function deadlineError(err: unknown): unknown {
  const name = errorName(err);
  // AbortSignal.timeout aborts with a TimeoutError; the SDKs report the abort as their own.
  return name === 'APIUserAbortError' || name === 'AbortError' || name === 'TimeoutError'
    ? new TimedOutError('The reply took too long')
    : err;
}

const chatNotFound = () => new NotFoundError('Chat not found');

/** The request names a message of the chat: the reply to regenerate, or the parent of a prompt. */
const namesMessage = (req: ReplyRequest) => 'messageId' in req || typeof req.parentId === 'string';

/**
 * The caller's chat, if it can take a prompt now (not someone else's, not deactivated, files ready).
 * A stranger's plain prompt is 403 (the contract's answer: docs/openapi.json); one that names a message of the chat is
 * answered as a missing chat, like every read of a message (docs/DECISIONS.md "Strangers naming a message").
 */
async function promptableChat(deps: SendMessageDeps, req: ReplyRequest): Promise<ChatRecord> {
  const chat = await deps.chats.record(req.chatId);
  if (!chat) throw chatNotFound();
  if (chat.userId !== req.userId) {
    if (namesMessage(req)) throw chatNotFound();
    throw new AccessDeniedError('You do not have access to this chat');
  }
  if (chat.status === 'deactivated') {
    throw new InvalidInputError(
      'This chat is deactivated; reactivate it (PUT /chat/{chatId} with status "active") to send prompts',
      undefined,
      'CHAT_DEACTIVATED',
    );
  }
  if (chat.type === 'file') await assertFilesReady(deps, chat);
  return chat;
}

/** What a reply answers: a new prompt (stored once its cost is reserved), or a stored prompt again. */
type Answering = { prompt: string; parentId?: string | null } | { again: Message; tree: MessageTree };

const promptOf = (a: Answering) => ('again' in a ? a.again.message : a.prompt);

/**
 * The prompt a request answers, checked against the chat's tree: a new prompt follows a reply
 * (or an attachment, or nothing: the root), never another prompt; a regenerated reply answers
 * the prompt of an ai message.
 */
async function answering(deps: SendMessageDeps, chat: Chat, req: ReplyRequest): Promise<Answering> {
  if ('messageId' in req) {
    const tree = await deps.messages.tree(chat.id);
    const reply = tree.get(req.messageId);
    if (!reply) throw new NotFoundError('No message with this id in this chat');
    const prompt = reply.parentId ? tree.get(reply.parentId) : undefined;
    if (reply.messageType !== 'ai' || !prompt || !isPrompt(prompt))
      throw new InvalidInputError('Only an ai reply to a prompt can be regenerated', undefined, 'NOT_A_REPLY');
    const [again] = await deps.messages.at(chat.id, [prompt.sequenceNumber]);
    if (!again) throw new NotFoundError('No message with this id in this chat');
    return { again, tree };
  }
  if (req.parentId) {
    const parent = await deps.messages.byId(chat.id, req.parentId);
    if (!parent) throw notInChat('body.parentId');
    if (isPrompt(parent))
      throw new InvalidInputError(
        'A prompt follows a reply: parentId must be an ai message (or null to start at the root)',
        [{ path: 'body.parentId', message: 'Is a prompt' }],
      );
  }
  return { prompt: req.prompt, ...(req.parentId !== undefined && { parentId: req.parentId }) };
}

const isPrompt = (m: { messageType: string; type: string }) => m.messageType === 'user' && m.type === 'message';

/**
 * Everything before the model call once the cost is reserved.
 * Steps: store the user's message (its sequence number from the chat's counter; under the chosen
 * parent, or the active leaf) unless the prompt is answered again → the history of the prompt's
 * branch that fits the token budget, oldest dropped first (read before storing, for the
 * reservation: read again only if the prompt landed elsewhere) → in a file
 * chat, make the retrieval query from that conversation (a follow-up is rewritten into a
 * standalone question) and retrieve the best passages.
 */
async function prepare(
  deps: SendMessageDeps,
  req: TurnRequest,
  chat: ChatRecord,
  turn: Answering,
  sending: Sending,
  spent: Spent,
): Promise<Prepared> {
  const userMessage =
    'again' in turn
      ? turn.again
      : await deps.messages.append({
          chatId: chat.id,
          userId: req.userId,
          ...(turn.parentId !== undefined && { parentId: turn.parentId }),
          message: turn.prompt,
          messageType: 'user',
          type: 'message',
          timestamp: isoNow(deps.clock),
        });
  const fileChat = chat.type === 'file';
  const parentId = 'again' in turn ? sending.parentId : (userMessage.parentId ?? null);
  // Read before the prompt was stored; read again only if another prompt moved the leaf meanwhile.
  const history =
    parentId === sending.parentId
      ? sending.history
      : await fitHistory(
          deps.messages.branchNewestFirst(chat.id, await deps.messages.tree(chat.id), parentId),
          deps.settings.historyTokenBudget,
        );
  const prompt = userMessage.message;
  let sources: Source[] | undefined;
  let queryUsage: Usage | undefined;
  if (fileChat) {
    try {
      const deadlineMs = deadlineOf(req);
      const signal = deadlineMs ? AbortSignal.timeout(deadlineMs) : undefined;
      const { query, usage } = await retrievalQuery(deps.provider, history, prompt, signal);
      queryUsage = usage;
      spent.tokens += usage?.totalTokens ?? 0;
      sources = await deps.retrieve({
        chatId: chat.id,
        // A collection chat searches the collection's files as they are now, not attachments.
        fileIds: await collectionFileIds(deps.files, chat),
        prompt: query,
        provider: deps.provider,
        k: deps.settings.retrievalK ?? DEFAULT_RETRIEVAL_K,
        onEmbedded: (tokens) => {
          spent.tokens += tokens;
          spent.embedded += tokens;
        },
      });
    } catch (err) {
      throw deadlineError(err);
    }
  }
  const input: ChatInput = {
    system: chat.systemMessage,
    history,
    prompt,
    maxTokens: deps.settings.replyMaxTokens,
    ...(fileChat && { fileChat, sources: sources ?? [] }),
  };
  return {
    chat,
    userMessage,
    input,
    ...(sources && { sources: sources.map(toRef) }),
    queryUsage,
    spent,
  };
}

/** The prompt's parent and history as they are before the prompt is stored (a regenerated prompt's as stored). */
async function whatIsSent(deps: SendMessageDeps, chat: ChatRecord, turn: Answering): Promise<Sending> {
  let tree: MessageTree;
  let parentId: string | null;
  if ('again' in turn) {
    tree = turn.tree;
    parentId = tree.get(turn.again.id)?.parentId ?? null;
  } else {
    tree = await deps.messages.tree(chat.id);
    // Where messages.append will put it: under the chat's active leaf, else its newest message.
    parentId = turn.parentId !== undefined ? turn.parentId : (chat.activeLeafId ?? tree.activeLeaf(undefined) ?? null);
  }
  const history = await fitHistory(
    deps.messages.branchNewestFirst(chat.id, tree, parentId),
    deps.settings.historyTokenBudget,
  );
  return { parentId, history };
}

/**
 * The checks, a reply slot and the reservation, then `prepare`: every refusal of the caller's
 * input comes before anything is stored, and the slot and reservation are released when
 * preparing fails.
 */
async function begin(deps: SendMessageDeps, req: ReplyRequest) {
  const chat = await promptableChat(deps, req);
  const turn = await answering(deps, chat, req);
  const slot = await takeReplySlot(deps, req); // refused before anything is stored
  let reservation: TokenReservation | undefined;
  let sending: Sending;
  try {
    sending = await whatIsSent(deps, chat, turn);
    reservation = await reserve(deps, req.userId, chat, promptOf(turn), sending); // refused before anything is stored
  } catch (err) {
    await releaseReplySlot(deps, slot);
    throw err;
  }
  const spent: Spent = { userId: req.userId, tokens: 0, embedded: 0 };
  try {
    return { prepared: await prepare(deps, req, chat, turn, sending, spent), reservation, slot };
  } catch (err) {
    await settle(deps, reservation, spent.tokens, spent);
    await releaseReplySlot(deps, slot);
    throw deadlineError(err);
  }
}

/** The longest a reply may hold its slot when the invocation's time left is unknown (Lambda's most). */
const REPLY_LEASE_FALLBACK_MS = 15 * 60_000;

/**
 * One of the user's REPLIES_MAX_IN_FLIGHT_PER_USER slots, for as long as this invocation may
 * run: released however the reply ends, and if the invocation dies first, free when it would
 * have ended (docs/DECISIONS.md "Atomic admission of work in flight").
 */
export function takeReplySlot(deps: Pick<SendMessageDeps, 'budget'>, req: Omit<TurnRequest, 'chatId'>) {
  return deps.budget?.takeInFlight(req.userId, 'replies', {
    holder: createId(),
    leaseMs: (req.remainingMs ?? REPLY_LEASE_FALLBACK_MS) + DEADLINE_MARGIN_MS,
  });
}

/** Frees a reply's slot; a failure here only leaves the slot to its lease. */
export async function releaseReplySlot(deps: Pick<SendMessageDeps, 'budget'>, slot: HeldSlot | undefined) {
  await deps.budget
    ?.releaseInFlight(slot)
    .catch((err: unknown) => logger.error('could not release a reply slot', { error: asError(err) }));
}

/**
 * Holds the reply's most likely cost against the user's daily budget before anything is stored (a
 * refusal then changes nothing): the whole prompt as it will be sent (history included; in a file
 * chat the passages, rewrite and query embedding at their most) plus the longest reply
 * (reply-cost.ts). Settled to the real usage once the reply is known (shared/limits/user-limits.ts).
 */
async function reserve(deps: SendMessageDeps, userId: string, chat: ChatRecord, prompt: string, sending: Sending) {
  const { settings } = deps;
  const tokens = replyCostBound(
    {
      system: chat.systemMessage,
      history: sending.history,
      prompt,
      maxTokens: settings.replyMaxTokens,
      fileChat: chat.type === 'file',
    },
    chat.type === 'file'
      ? {
          k: settings.retrievalK ?? DEFAULT_RETRIEVAL_K,
          chunkTokens: settings.chunkTokens ?? DEFAULT_CHUNK_TOKENS,
          rewrite: deps.provider.name !== 'offline',
        }
      : undefined,
  );
  return deps.budget?.reserveTokens(userId, tokens);
}

/**
 * Settles a reservation and counts the tokens by model (the user's usage); a failure here must
 * not lose a reply already generated.
 */
export async function settle(
  deps: Pick<SendMessageDeps, 'budget' | 'usage' | 'provider'>,
  reservation: TokenReservation | undefined,
  usedTokens: number,
  spent: Spent,
) {
  const { chatModel, embeddingModel } = deps.provider;
  await Promise.all([
    deps.budget
      ?.settle(reservation, usedTokens)
      .catch((err: unknown) => logger.error('could not settle the token budget', { error: asError(err) })),
    deps.usage
      ?.addTokens(spent.userId, { [chatModel]: usedTokens - spent.embedded, [embeddingModel]: spent.embedded })
      .catch((err: unknown) => logger.error('could not count the tokens used', { error: asError(err) })),
  ]);
}

/** Stores the assistant's whole reply under the prompt it answers. */
function storeReply(
  deps: SendMessageDeps,
  r: { chatId: string; userId: string; promptId: string; text: string; usage: Usage; sources?: SourceRef[] },
) {
  return deps.messages.append({
    chatId: r.chatId,
    userId: r.userId,
    parentId: r.promptId,
    message: r.text,
    messageType: 'ai',
    type: 'message',
    usage: r.usage,
    sources: r.sources,
    // Complete, as a streamed reply is stored once it ends (a whole reply that fails is not stored).
    status: 'complete',
    timestamp: isoNow(deps.clock),
  });
}

/** How long a title may take (it holds back the end of the first reply). */
const TITLE_TIMEOUT_MS = 5_000;

/**
 * Titles a chat created without a name from its first complete exchange (chat-title.ts); the
 * title when this call gave it, and the tokens it cost either way.
 */
async function titleChat(
  deps: SendMessageDeps,
  { chat, userMessage }: Prepared,
  reply: string,
): Promise<{ title?: string; tokens: number }> {
  if (!chat.autoTitle) return { tokens: 0 };
  const made = await chatTitle(
    deps.provider,
    { prompt: userMessage.message, reply },
    AbortSignal.timeout(TITLE_TIMEOUT_MS),
  );
  if (!made) return { tokens: 0 };
  const tokens = made.usage?.totalTokens ?? 0;
  const applied = await deps.chats.setTitle(chat.id, made.title, isoNow(deps.clock)).catch((err: unknown) => {
    logger.warn('could not store the chat title', { message: asError(err).message });
    return false;
  });
  return applied ? { title: made.title, tokens } : { tokens };
}

/**
 * The reply in one piece (a token reservation first: refused when the daily budget cannot hold it).
 * Steps: begin (above) → call the model (within the deadline) → keep what fits the reply's length
 * (reply-length.ts) → in a file chat, remove the
 * [n] markers that name no source and flag the cited sources → title a new chat → store the
 * reply under its prompt with its usage (the follow-up rewrite's included) and sources → return
 * it. A model failure leaves a new prompt stored, unanswered.
 */
export async function sendMessage(deps: SendMessageDeps, req: ReplyRequest): Promise<Reply> {
  const { prepared, reservation, slot } = await begin(deps, req);
  try {
    return await replyWhole(deps, req, prepared, reservation);
  } finally {
    await releaseReplySlot(deps, slot);
  }
}

async function replyWhole(
  deps: SendMessageDeps,
  req: ReplyRequest,
  prepared: Prepared,
  reservation: TokenReservation | undefined,
): Promise<Reply> {
  let result: { text: string; usage: Usage };
  try {
    const deadlineMs = deadlineOf(req);
    result = await deps.provider.reply({
      ...prepared.input,
      ...(deadlineMs && { signal: AbortSignal.timeout(deadlineMs) }),
    });
  } catch (err) {
    // Sent and then cut (a timeout): the prompt was read and is paid for.
    await settle(
      deps,
      reservation,
      unreportedUsage(prepared.input, '', err).totalTokens + prepared.spent.tokens,
      prepared.spent,
    );
    throw deadlineError(err);
  }
  const { chat, userMessage } = prepared;
  const replyTokens = result.usage.totalTokens;
  const text = new ReplyLength(deps.settings.replyMaxTokens).take(result.text);
  result = { text, usage: addUsage(result.usage, prepared.queryUsage) };
  let sources = prepared.sources;
  if (sources) {
    const checked = checkCitations(result.text, citableSources(sources));
    result = { ...result, text: checked.text };
    sources = flagCited(sources, checked.cited);
  }
  const titled = await titleChat(deps, prepared, result.text);
  await settle(deps, reservation, replyTokens + titled.tokens + prepared.spent.tokens, prepared.spent);
  const stored = await storeReply(deps, {
    chatId: chat.id,
    userId: req.userId,
    promptId: userMessage.id,
    text: result.text,
    usage: result.usage,
    sources,
  });
  return {
    response: result.text,
    userMessageId: userMessage.id,
    usage: result.usage,
    sources,
    messageId: stored.id,
    sequenceNumber: stored.sequenceNumber,
    status: 'complete',
    ...(titled.title && { chatName: titled.title }),
  };
}

/**
 * The reply as a stream of events (shared/chats/replies/reply-events.ts). Client errors are thrown
 * before any event, so they are ordinary JSON responses.
 * Steps: begin (above) → store the reply under its prompt, status streaming, so it can be read,
 * resumed and stopped from anywhere → `start`, naming the prompt and the reply → in a file chat
 * `sources`, so a client knows every [n] before it is cited → one event per model delta (cut at
 * the reply's length, reply-length.ts; in a file chat checked for markers, citations.ts), the text stored as it grows (ReplyRecorder)
 * → title a new chat → the last write: the whole text, usage, status complete or failed (stopped
 * when a stop came), the title → the closing events (citations, usage, title, stopped, or error).
 */
export async function streamMessage(deps: SendMessageDeps, req: ReplyRequest): Promise<ReplyStream> {
  const { prepared, reservation, slot } = await begin(deps, req);
  let reply: ReplyState;
  try {
    reply = await deps.replies.start({
      id: createId(),
      chatId: prepared.chat.id,
      userId: req.userId,
      promptId: prepared.userMessage.id,
      promptSequence: prepared.userMessage.sequenceNumber,
      ...(prepared.sources && { sources: prepared.sources }),
      now: isoNow(deps.clock),
    });
  } catch (err) {
    await settle(deps, reservation, prepared.spent.tokens, prepared.spent);
    await releaseReplySlot(deps, slot);
    throw err;
  }
  return {
    open: async function* () {
      try {
        yield* generate(deps, req, prepared, reply, reservation);
      } finally {
        await releaseReplySlot(deps, slot);
      }
    },
  };
}

/** What a failure says to the client (the same words a JSON response would carry). */
export function failureMessage(err: unknown): string {
  if (err instanceof AiProviderError) return clientMessage(err);
  if (err instanceof DomainError) return err.message;
  return 'The reply failed';
}

async function* generate(
  deps: SendMessageDeps,
  req: TurnRequest,
  prepared: Prepared,
  reply: ReplyState,
  reservation: TokenReservation | undefined,
): AsyncGenerator<ReplyEvent> {
  const { chat, userMessage, input, sources, queryUsage } = prepared;
  const replyId = reply.message.id;
  const citations = sources ? new CitationStream(citableSources(sources)) : undefined;
  const length = new ReplyLength(input.maxTokens);
  const recorder = new ReplyRecorder(deps, chat.id, reply.message.sequenceNumber);
  const deadlineMs = deadlineOf(req);
  const signal = deadlineMs ? AbortSignal.any([recorder.stopped, AbortSignal.timeout(deadlineMs)]) : recorder.stopped;
  const start = {
    chatId: chat.id,
    userMessageId: userMessage.id,
    userSequenceNumber: userMessage.sequenceNumber,
    messageId: replyId,
  };
  yield* openingEvents(start, sources);
  let id = firstDeltaId(!!sources);
  let usage: Usage | undefined;
  let failure: unknown;
  const delta = (text: string): ReplyEvent | undefined => {
    if (!text) return undefined;
    recorder.add(text);
    return { id: id++, data: { content: text } };
  };
  try {
    for await (const part of deps.provider.streamReply({ ...input, signal })) {
      if (part.type !== 'delta') {
        usage = part.usage;
        continue;
      }
      const kept = length.take(part.text);
      const event = delta(citations ? citations.push(kept) : kept);
      if (event) yield event;
      if (length.full) break; // the model ignored the reply's length: its request is closed
    }
    if (signal.aborted && !recorder.stopped.aborted)
      failure = new TimedOutError('The reply took too long and was cut short');
  } catch (err) {
    if (!recorder.stopped.aborted) failure = err;
  }
  const tail = delta(citations?.end() ?? '');
  if (tail) yield tail;
  await recorder.close();

  const text = recorder.text;
  const total = addUsage(usage ?? estimateUsage(input, text), queryUsage);
  const complete = failure === undefined && !recorder.stopped.aborted;
  const titled = complete ? await titleChat(deps, prepared, text) : { tokens: 0 };
  // What the model was sent and produced is paid for, however the reply ended.
  const replyTokens = (usage ?? unreportedUsage(input, text, failure)).totalTokens;
  await settle(deps, reservation, replyTokens + titled.tokens + prepared.spent.tokens, prepared.spent);
  if (failure && !(failure instanceof AiProviderError) && !(failure instanceof DomainError)) {
    logger.error('streamed reply failed', { error: asError(failure) });
  } else if (failure) {
    logger.warn('streamed reply failed', { message: asError(failure).message });
  }
  const cited = citations ? [...citations.cited].sort((a, b) => a - b) : undefined;
  const failedWith = failure === undefined ? undefined : failureMessage(failure);
  let status: ReplyStatus | undefined;
  try {
    status = await deps.replies.finish(chat.id, reply.message.sequenceNumber, {
      text,
      deltaEnds: recorder.deltaEnds,
      status: failedWith === undefined ? 'complete' : 'failed',
      usage: total,
      ...(sources && citations && { sources: flagCited(sources, citations.cited) }),
      ...(cited && { cited }),
      failureMessage: failedWith,
      title: titled.title,
      now: isoNow(deps.clock),
    });
  } catch (err) {
    logger.error('could not store the streamed reply', { error: asError(err) });
  }
  if (!status) {
    yield { id, event: 'error', data: { message: 'The reply could not be saved' } };
    return;
  }
  yield* closingEvents({
    ...reply,
    message: { ...reply.message, status, usage: total, ...(sources && { sources }) },
    deltaEnds: recorder.deltaEnds,
    ...(cited && { cited }),
    ...(failedWith !== undefined && { failureMessage: failedWith }),
    ...(titled.title && { title: titled.title }),
    finished: true,
  });
}

/** How often the growing text is written (at most; nothing is written while nothing is new). */
const FLUSH_MS = 500;

/**
 * Stores a streamed reply as it grows, at most every FLUSH_MS whatever the number of deltas, so
 * a long reply costs writes in proportion to its duration, not its tokens; a reader (a resume,
 * the list of messages) is at most FLUSH_MS behind the generator, and a generator that dies loses
 * at most that much. Between writes it reads the status, so a stop requested anywhere is seen
 * within FLUSH_MS: `stopped` fires (also when the reply is gone with its chat). A write goes out
 * at least every heartbeat, so readers can tell a live generator from a dead one.
 */
class ReplyRecorder {
  text = '';
  readonly deltaEnds: number[] = [];
  private readonly stop = new AbortController();
  private written = 0;
  private lastWrite = Date.now();
  private running: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly deps: SendMessageDeps,
    private readonly chatId: string,
    private readonly sequenceNumber: number,
  ) {
    this.timer = setInterval(() => {
      this.running ??= this.tick().finally(() => (this.running = undefined));
    }, FLUSH_MS);
  }

  get stopped(): AbortSignal {
    return this.stop.signal;
  }

  add(text: string): void {
    this.text += text;
    this.deltaEnds.push(this.text.length);
  }

  private async tick(): Promise<void> {
    if (this.stop.signal.aborted) return;
    const { replies, clock, settings } = this.deps;
    try {
      const heartbeatDue = Date.now() - this.lastWrite >= settings.replyHeartbeatMs;
      if (this.deltaEnds.length > this.written || heartbeatDue) {
        const count = this.deltaEnds.length;
        const now = isoNow(clock);
        const applied = await replies.progress(this.chatId, this.sequenceNumber, {
          text: this.text.slice(0, this.deltaEnds[count - 1] ?? 0),
          deltaEnds: this.deltaEnds.slice(0, count),
          now,
        });
        if (!applied) return this.stop.abort();
        this.written = count;
        this.lastWrite = Date.now();
      } else if ((await replies.statusAt(this.chatId, this.sequenceNumber)) !== 'streaming') {
        this.stop.abort();
      }
    } catch (err) {
      logger.warn('could not store the reply so far', { message: asError(err).message });
    }
  }

  /** Stops writing; resolves once a write under way is done. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
