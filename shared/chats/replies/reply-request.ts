import '../../config/chat.ts';
import '../../config/chunking.ts';
import { AiProviderError, clientMessage } from '../../ai/errors.ts';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { UserLimits } from '../../limits/user-limits.ts';
import type { AiProvider, Source, Usage } from '../../ai/types.ts';
import { DomainError, TimedOutError, errorName } from '../../errors.ts';
import type { ChatScopeDeps } from '../conversations/chat-files-of.ts';
import type { RetrieveInput } from '../../retrieval/retrieve.ts';
import type { ChatRepository } from '../conversations/chat-repository.ts';
import type { MessageRepository } from '../conversations/message-repository.ts';
import type { SourceRef } from '../schemas.ts';
import type { UsageLedger } from '../../limits/usage-ledger.ts';
import type { ReplyRepository } from './reply-repository.ts';

// What a reply is asked for and works with (POST /message/logged-in, POST …/regenerate), its
// deadline, and what a failure says: shared by every step of its life (send-message.ts).

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

export const DEFAULT_RETRIEVAL_K = 6;
export const DEFAULT_CHUNK_TOKENS = 800;

export interface TurnRequest {
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

export type ReplyRequest = SendMessageRequest | RegenerateRequest;

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

/** Time kept after the model call to store the reply and close the stream. */
export const DEADLINE_MARGIN_MS = 5_000;
/** When the model call is abandoned: a margin before the invocation ends (at least a second). */
export const deadlineOf = (req: Pick<TurnRequest, 'remainingMs'>) =>
  req.remainingMs ? Math.max(1_000, req.remainingMs - DEADLINE_MARGIN_MS) : undefined;

/** A call abandoned at the request's deadline, as the domain's timeout; other errors as they are. */
export function deadlineError(err: unknown): unknown {
  const name = errorName(err);
  // AbortSignal.timeout aborts with a TimeoutError; the SDKs report the abort as their own.
  return name === 'APIUserAbortError' || name === 'AbortError' || name === 'TimeoutError'
    ? new TimedOutError('The reply took too long')
    : err;
}

/** What a failure says to the client (the same words a JSON response would carry). */
export function failureMessage(err: unknown): string {
  if (err instanceof AiProviderError) return clientMessage(err);
  if (err instanceof DomainError) return err.message;
  return 'The reply failed';
}
