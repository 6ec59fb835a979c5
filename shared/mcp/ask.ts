import type { ChatInput, Source, Usage } from '../ai/types.ts';
import { checkCitations, citableSources } from '../chats/replies/citations.ts';
import { replyCostBound } from '../chats/replies/reply-cost.ts';
import { asError } from '../errors.ts';
import { logger } from '../observability/logger.ts';
import { searchedFiles, type SearchDeps } from '../retrieval/search.ts';

// The MCP tool `ask`: a one-off question answered from the caller's completed files, with the
// passages it cites (docs/DECISIONS.md "MCP server"). No chat is stored: an agent keeps its own
// conversation. The files are chosen as POST /search chooses them (a collection, some files, or
// all), the passages retrieved as a file chat retrieves them, and the answer's [n] markers checked
// as a file chat's (only a verified passage can be cited).

export interface AskDeps extends SearchDeps {
  settings: { replyMaxTokens: number; retrievalK: number; chunkTokens: number };
}

export interface AskRequest {
  userId: string;
  question: string;
  collectionId?: string | undefined;
  fileIds?: string[] | undefined;
}

export interface Citation {
  /** The n of the answer's [n]. */
  index: number;
  fileId: string;
  fileName: string;
  page: number;
  quote: string;
  verified: boolean;
}

export interface Answer {
  answer: string;
  citations: Citation[];
  usage: Usage;
}

const ASK_SYSTEM =
  'You answer questions from the passages of the user’s documents given to you. Cite the passages you use as [n]. ' +
  'Say so when the passages do not hold the answer.';

/**
 * Steps: the files asked about → hold the most the answer can cost against the budget → the
 * retriever's k passages → the model's answer → its markers checked → the budget settled to what
 * was spent and the tokens counted.
 */
export async function askFiles(deps: AskDeps, req: AskRequest): Promise<Answer> {
  const fileIds = await searchedFiles(deps, { ...req, query: req.question, k: deps.settings.retrievalK });
  const input: ChatInput = {
    system: ASK_SYSTEM,
    history: [],
    prompt: req.question,
    fileChat: true,
    maxTokens: deps.settings.replyMaxTokens,
  };
  const bound = replyCostBound(input, {
    k: deps.settings.retrievalK,
    chunkTokens: deps.settings.chunkTokens,
    rewrite: false,
  });
  const reservation = await deps.budget?.reserveTokens(req.userId, bound);
  let embedded = 0;
  let usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  try {
    const sources: Source[] = await deps.retrieve({
      fileIds,
      prompt: req.question,
      provider: deps.provider,
      k: deps.settings.retrievalK,
      onEmbedded: (tokens) => {
        embedded += tokens;
      },
    });
    const reply = await deps.provider.reply({ ...input, sources });
    usage = reply.usage;
    const { text, cited } = checkCitations(reply.text, citableSources(sources));
    return {
      answer: text,
      citations: [...cited]
        .sort((a, b) => a - b)
        .map((index) => {
          const s = sources[index - 1]!;
          return {
            index,
            fileId: s.fileId,
            fileName: s.fileName ?? '',
            page: s.page,
            quote: s.quote,
            verified: s.verified === true,
          };
        }),
      usage,
    };
  } finally {
    await Promise.all([
      deps.budget?.settle(reservation, embedded + usage.totalTokens),
      deps.usage?.addTokens(req.userId, {
        [deps.provider.embeddingModel]: embedded,
        [deps.provider.chatModel]: usage.totalTokens,
      }),
    ]).catch((err: unknown) => logger.error('could not count the ask tokens', { error: asError(err) }));
  }
}
