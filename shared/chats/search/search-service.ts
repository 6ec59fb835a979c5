import { InvalidInputError } from '../../errors.ts';
import type { Item, Key, Page } from '../../dynamo.ts';
import { distinctTerms, snippet } from './search-tokenizer.ts';
import { parseRef, type Block, type Ref, type SearchIndex } from './search-index.ts';

// GET /chat/search: the caller's chats whose name or messages hold every word of the query,
// newest first (docs/DECISIONS.md, Chat search). Each term's blocks (one per day) are read
// newest first and walked together: a day is intersected only when every term has a block for
// it, and a term ahead of the others is moved straight to the others' day (a zig-zag join).
// Steps: cut the query into terms → walk the days, gathering candidates → check them in batches
// against their chats and messages (gone, being deleted, or no longer holding the words:
// skipped) → stop at `limit` hits, or when the request's budget is spent, with a cursor to
// continue from.

/** Query terms used (the first distinct ones); more words only narrow a search further. */
export const SEARCH_MAX_TERMS = 8;
/** Blocks one request reads at most (each holds at most MAX_REFS_PER_BLOCK refs). */
export const SEARCH_MAX_BLOCK_READS = 48;
/** Candidates one request checks at most (against their chat and message). */
export const SEARCH_MAX_CANDIDATES = 200;
const BLOCK_PAGE = 4;
const MIN_CHECK_BATCH = 10;

export interface SearchHit {
  chatId: string;
  chatName: string;
  /** Null for a match of the chat's name. */
  messageId: string | null;
  snippet: string;
  timestamp: string;
}

interface SearchInput {
  userId: string;
  q: string;
  limit: number;
  cursor?: string;
}

const invalidCursor = () =>
  new InvalidInputError('Invalid cursor', [{ path: 'query.cursor', message: 'Not a cursor this search issued' }]);

/**
 * The position a cursor continues from: refs strictly below `before`. The cursor (base64url
 * JSON, like every list's) names its user: another user's is refused, as for the other lists.
 */
function decodeCursor(cursor: string | undefined, userId: string): string {
  if (cursor === undefined) return '~';
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  const { before, user } = (value ?? {}) as { before?: unknown; user?: unknown };
  if (user !== userId || typeof before !== 'string' || before.length > 200 || !/^\d{4}-\d{2}-\d{2}/.test(before))
    throw invalidCursor();
  return before;
}

/** The exclusive upper bound on block days that holds every ref below `upper`. */
const dayBound = (upper: string) => (upper.length > 10 ? `${upper.slice(0, 10)}~` : upper);

/** One term's blocks, read a few at a time as the walk moves to older days. */
class TermBlocks {
  private buffer: Block[] = [];
  /** Every block older than what was last read is in the buffer. */
  private complete = false;

  constructor(
    private readonly index: SearchIndex,
    private readonly userId: string,
    private readonly term: string,
    private readonly budget: { blockReads: number },
  ) {}

  /** The newest block of a day before `bound` (exclusive), or undefined when there is none. */
  async head(bound: string): Promise<Block | undefined> {
    this.buffer = this.buffer.filter((b) => b.day < bound);
    if (!this.buffer.length && !this.complete) {
      this.buffer = await this.index.blocks(this.userId, this.term, bound, BLOCK_PAGE);
      this.budget.blockReads += Math.max(1, this.buffer.length);
      this.complete = this.buffer.length < BLOCK_PAGE;
    }
    return this.buffer[0];
  }
}

export async function searchChats(deps: { search: SearchIndex }, input: SearchInput): Promise<Page<SearchHit>> {
  const terms = distinctTerms(input.q).slice(0, SEARCH_MAX_TERMS);
  if (!terms.length)
    throw new InvalidInputError('Nothing to search for', [
      { path: 'query.q', message: 'Must hold a word of two letters or more, or a CJK character' },
    ]);
  const wanted = new Set(terms);
  const budget = { blockReads: 0 };
  const readers = terms.map((t) => new TermBlocks(deps.search, input.userId, t, budget));
  const hits: SearchHit[] = [];
  let upper = decodeCursor(input.cursor, input.userId);
  /** Candidates of the days walked so far, newest first, not checked yet (checked in batches). */
  const pending: string[] = [];
  let checked = 0;
  let lastChecked: string | undefined;
  const page = (before?: string): Page<SearchHit> => ({
    items: hits,
    ...(before && { lastKey: { user: input.userId, before } as Key }),
  });
  /** Checks the pending candidates; where the next page starts when the page filled or the budget ran out. */
  const check = async (): Promise<string | undefined> => {
    while (pending.length) {
      if (checked >= SEARCH_MAX_CANDIDATES) return lastChecked;
      const batch = pending.splice(0, Math.max(MIN_CHECK_BATCH, input.limit - hits.length));
      checked += batch.length;
      for (const [ref, hit] of await checkHits(deps.search, input.userId, batch, wanted)) {
        lastChecked = ref;
        if (hit) hits.push(hit);
        if (hits.length === input.limit) return ref;
      }
    }
    return undefined;
  };

  for (;;) {
    if (budget.blockReads >= SEARCH_MAX_BLOCK_READS || checked >= SEARCH_MAX_CANDIDATES)
      return page((await check()) ?? upper);
    const heads = await Promise.all(readers.map((r) => r.head(dayBound(upper))));
    if (heads.some((h) => h === undefined)) return page(await check());
    const day = (heads as Block[]).map((h) => h.day).sort()[0]!; // the oldest of the heads
    if (heads.some((h) => h!.day !== day)) {
      upper = `${day}~`; // nothing matches on a newer day: a term has no block there
      continue;
    }
    const [first, ...rest] = (heads as Block[]).map((h) => h.refs);
    const others = rest.map((refs) => new Set(refs));
    pending.push(...first!.filter((r) => r < upper && others.every((s) => s.has(r))));
    upper = day; // the whole day is walked
    if (pending.length >= input.limit - hits.length) {
      const next = await check();
      if (next) return page(next);
    }
  }
}

/** Each candidate ref (in order) with its hit, or undefined when its chat or message no longer matches. */
async function checkHits(
  index: SearchIndex,
  userId: string,
  refs: string[],
  terms: ReadonlySet<string>,
): Promise<[string, SearchHit | undefined][]> {
  const parsed = refs.map((r) => [r, parseRef(r)] as const);
  const { chats, messages } = await index.read(parsed.flatMap(([, p]) => (p ? [p] : [])));
  return parsed.map(([r, p]) => [r, p && hitOf(p, chats.get(p.chatId), messages, userId, terms)]);
}

const holdsAll = (text: string, terms: ReadonlySet<string>) => {
  const own = new Set(distinctTerms(text));
  return [...terms].every((t) => own.has(t));
};

function hitOf(
  ref: Ref,
  chat: Item | undefined,
  messages: Map<string, Item>,
  userId: string,
  terms: ReadonlySet<string>,
): SearchHit | undefined {
  if (!chat || chat.deleting || chat.userId !== userId) return undefined;
  const chatName = String(chat.chatName);
  const base = { chatId: ref.chatId, chatName, timestamp: ref.timestamp };
  if (!ref.messageId)
    return holdsAll(chatName, terms) ? { ...base, messageId: null, snippet: snippet(chatName, terms) } : undefined;
  const message = messages.get(`${ref.chatId}|${ref.sequenceNumber}`);
  if (!message || message.id !== ref.messageId || typeof message.message !== 'string') return undefined;
  if (!holdsAll(message.message, terms)) return undefined;
  return { ...base, messageId: ref.messageId, snippet: snippet(message.message, terms) };
}
