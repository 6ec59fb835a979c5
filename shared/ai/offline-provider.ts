import { sleep } from '../clock.ts';
import { LEXICAL_EMBEDDING_DIMENSIONS, lexicalEmbedding } from './lexical-embedding.ts';
import { estimateUsage, sourceLabel } from './prompt.ts';
import { estimateTokens } from './tokens.ts';
import type { AiProvider, ChatInput, ChatTurn, EmbeddingResult, Source, StreamPart } from './types.ts';

// The provider used when no language model is configured (no OPENAI_API_KEY). It never invents
// an answer. What it can honestly do without a model: in a file chat, quote the passages of the
// chat's documents that best match the prompt, with their pages, labelled offline; in a text chat,
// say that no model is configured and how to set one, and quote the earlier message of the
// conversation closest to the prompt (by shared words), so a user can find what was said. It
// streams word by word at a readable pace (OFFLINE_STREAM_DELAY_MS), so `npm start` shows
// streaming. Its embeddings are lexical (see lexical-embedding.ts).

const OFFLINE_CHAT_MODEL = 'offline-extractive';
const OFFLINE_EMBEDDING_MODEL = `offline-lexical-${LEXICAL_EMBEDDING_DIMENSIONS}`;
const OFFLINE_LABEL = '[Offline mode: no language model is configured, so this is not a generated answer.]';
const MAX_PASSAGES = 3;
const MAX_PASSAGE_CHARS = 600;

const HOW_TO_CONFIGURE =
  'To get answers from a language model, set OPENAI_API_KEY (and OPENAI_BASE_URL to use any ' +
  'OpenAI-compatible server, local ones included), or AI_PROVIDER=bedrock for Amazon Bedrock, and restart the service.';

function passage(source: Source): string {
  // A bracketed number of the document ("see [3]") would read as a citation marker: shown as (3).
  const text = (source.quote || source.text)
    .replace(/\s+/g, ' ')
    .replace(/\[(\d[\d,\s]*)\]/g, '($1)')
    .trim();
  if (text.length <= MAX_PASSAGE_CHARS) return text;
  const cut = text.slice(0, MAX_PASSAGE_CHARS);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), MAX_PASSAGE_CHARS / 2))} …`;
}

const wordsOf = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []);

/** The earlier turn sharing the most words with the prompt (at least two), newest among equals. */
function closestTurn(input: ChatInput): ChatTurn | undefined {
  const wanted = wordsOf(input.prompt);
  let best: { turn: ChatTurn; shared: number } | undefined;
  for (const turn of input.history) {
    const shared = [...wordsOf(turn.content)].filter((w) => wanted.has(w)).length;
    if (shared >= 2 && shared >= (best?.shared ?? 0)) best = { turn, shared };
  }
  return best?.turn;
}

/** The whole offline reply for an input. */
function offlineReplyText(input: ChatInput): string {
  if (!input.fileChat) {
    const closest = closestTurn(input);
    const recalled = closest
      ? `\n\nEarlier in this conversation, ${closest.role === 'user' ? 'you wrote' : 'the reply was'} (the message closest to your prompt by shared words):\n"${passage({ quote: closest.content, text: closest.content } as Source)}"`
      : '';
    return (
      `No language model is configured for this service, so I cannot answer your prompt. ${HOW_TO_CONFIGURE}` +
      '\n\nWithout a model I can still quote: in a file chat, the passages of your PDFs that match your prompt best, with their pages.' +
      recalled
    );
  }
  const sources = (input.sources ?? []).slice(0, MAX_PASSAGES);
  if (sources.length === 0) {
    return (
      `${OFFLINE_LABEL}\n\nI found nothing relevant to your prompt in this chat's documents. ` +
      'Attach a PDF to this chat (POST /message/pdf with its chatId), or use words that appear in the document.'
    );
  }
  // Cited as [n] (n: the passage's position in the sources), like a model's reply.
  const lines = sources.map((s, i) => `[${i + 1}] ${sourceLabel(s)} (match ${s.score.toFixed(2)}):\n"${passage(s)}"`);
  return (
    `${OFFLINE_LABEL} These passages of your documents match your prompt best (by shared words):\n\n` +
    `${lines.join('\n\n')}\n\n${HOW_TO_CONFIGURE}`
  );
}

/** The reply as a stream carries it: one delta per word with the whitespace after it. */
export const splitIntoWords = (text: string): string[] => text.match(/\S+\s*|\s+/g) ?? [];

/** The reply split into a few deltas at line or sentence ends. */
export function splitIntoParts(text: string, parts = 4): string[] {
  // Split after sentence ends (with any closing bracket or quote) and line breaks; zero-width,
  // so every character is kept.
  const pieces = text.split(/(?<=[.!?]["')\]]?\s+|\n)(?=\S)/);
  const size = Math.ceil(text.length / parts);
  const out: string[] = [];
  let current = '';
  for (const piece of pieces) {
    current += piece;
    if (current.length >= size) {
      out.push(current);
      current = '';
    }
  }
  if (current) out.push(current);
  return out;
}

export interface OfflineOptions {
  /** Pause between streamed words, so a stream reads at a human pace (0: none). */
  deltaDelayMs?: number;
}

export function createOfflineProvider(
  limits: { maxInputs: number; maxTokens: number },
  options: OfflineOptions = {},
): AiProvider {
  return {
    name: 'offline',
    chatModel: OFFLINE_CHAT_MODEL,
    embeddingModel: OFFLINE_EMBEDDING_MODEL,
    embeddingDimensions: LEXICAL_EMBEDDING_DIMENSIONS,
    embeddingLimits: limits,

    async reply(input) {
      const text = offlineReplyText(input);
      return { text, usage: estimateUsage(input, text) };
    },

    async *streamReply(input): AsyncGenerator<StreamPart> {
      const text = offlineReplyText(input);
      for (const [i, word] of splitIntoWords(text).entries()) {
        if (i > 0) await sleep(options.deltaDelayMs ?? 0, input.signal);
        if (input.signal?.aborted) return;
        yield { type: 'delta', text: word };
      }
      yield { type: 'usage', usage: estimateUsage(input, text) };
    },

    async embed(texts): Promise<EmbeddingResult> {
      return {
        vectors: texts.map((t) => lexicalEmbedding(t)),
        tokens: texts.reduce((n, t) => n + estimateTokens(t), 0),
      };
    },
  };
}
