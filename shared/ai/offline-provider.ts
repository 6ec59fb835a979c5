import { LEXICAL_EMBEDDING_DIMENSIONS, lexicalEmbedding } from './lexical-embedding.ts';
import { estimateUsage, sourceLabel } from './prompt.ts';
import { estimateTokens } from './tokens.ts';
import type { AiProvider, ChatInput, EmbeddingResult, Source, StreamPart } from './types.ts';

// The provider used when no language model is configured (no OPENAI_API_KEY). It never invents
// an answer: in a text chat it says that no model is configured and how to set one; in a file
// chat it quotes the passages of the chat's documents that best match the prompt, with their
// pages, labelled offline. Its embeddings are lexical (see lexical-embedding.ts).

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

/** The whole offline reply for an input. */
function offlineReplyText(input: ChatInput): string {
  if (!input.fileChat) {
    return `No language model is configured for this service, so I cannot answer your prompt. ${HOW_TO_CONFIGURE}`;
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

/** The reply split into a few deltas at line or sentence ends (what a stream would carry). */
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

export function createOfflineProvider(limits: { maxInputs: number; maxTokens: number }): AiProvider {
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
      for (const part of splitIntoParts(text)) {
        if (input.signal?.aborted) return;
        yield { type: 'delta', text: part };
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
