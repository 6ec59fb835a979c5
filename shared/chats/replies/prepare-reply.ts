import { isoNow } from '../../clock.ts';
import type { TokenReservation } from '../../limits/user-limits.ts';
import type { ChatInput, ChatTurn, Source, Usage } from '../../ai/types.ts';
import { AccessDeniedError, ConflictError, InvalidInputError, NotFoundError } from '../../errors.ts';
import { describeProgress } from '../../files/chat-files.ts';
import { collectionFileIds, filesOfChat } from '../conversations/chat-files-of.ts';
import { notInChat } from '../conversations/branch.ts';
import type { ChatRecord } from '../conversations/chat-repository.ts';
import type { MessageTree } from '../conversations/message-tree.ts';
import { fitHistory } from './history.ts';
import { retrievalQuery } from './retrieval-query.ts';
import type { Chat, Message, SourceRef } from '../schemas.ts';
import { releaseReplySlot, reserve, settle, takeReplySlot, type Spent } from './reply-budget.ts';
import {
  DEFAULT_RETRIEVAL_K,
  deadlineError,
  deadlineOf,
  type ReplyRequest,
  type SendMessageDeps,
  type TurnRequest,
} from './reply-request.ts';

// Everything before the model call: the checks of the caller's request, the reply's slot and
// reservation, the prompt stored, its history and (in a file chat) the retrieved passages.

export interface Prepared {
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

/** The history a prompt will be sent with, read before the prompt is stored (for the reservation). */
interface Sending {
  parentId: string | null;
  history: ChatTurn[];
}

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
export async function begin(deps: SendMessageDeps, req: ReplyRequest) {
  const chat = await promptableChat(deps, req);
  const turn = await answering(deps, chat, req);
  const slot = await takeReplySlot(deps, req); // refused before anything is stored
  let reservation: TokenReservation | undefined;
  let sending: Sending;
  try {
    sending = await whatIsSent(deps, chat, turn);
    reservation = await reserve(deps, req.userId, chat, promptOf(turn), sending.history); // refused before anything is stored
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
