// The one interface every AI provider implements (OpenAI-compatible, Amazon Bedrock or offline).

import type { PartLocation } from '../readers/reader.ts';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ChatTurn {
  role: 'user' | 'assistant';
  content: string;
}

/** A retrieved passage of an ingested PDF, cited in a reply. */
export interface Source {
  fileId: string;
  fileName?: string;
  /** 1-based page number (a PDF); the part's number in another format. */
  page: number;
  /** 1-based part of the document (a PDF's page, a slide, a sheet's rows, a section). */
  part?: number;
  /** Where the quote sits in its document (page, slide, sheet and range, section path). */
  location?: PartLocation;
  /** Chunk index within the file. */
  chunk: number;
  /** Cosine similarity to the prompt. */
  score: number;
  /** The chunk's full text (model context). */
  text: string;
  /** A short passage that appears verbatim in the chunk. */
  quote: string;
  /** The page's text was recognised by OCR (it may contain recognition errors). */
  ocr?: boolean;
  /** The heading path the passage sits under. */
  section?: string;
  /** The quote's place in its page's text (GET /message/pdf/{fileId}/pages/{page}); set when verified. */
  charStart?: number;
  charEnd?: number;
  /** Where the quote is drawn: fractions of the page, origin top-left; one box per line. */
  boxes?: QuoteBox[];
  /** The quote occurs on that page (after normalisation): only a verified source can be cited. */
  verified?: boolean;
}

export interface QuoteBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface ChatInput {
  system: string;
  /** Oldest first, already trimmed to the token budget. */
  history: ChatTurn[];
  prompt: string;
  /** Passages retrieved for a file chat; the provider puts them in the model's context. */
  sources?: Source[];
  /** True in a file chat (even when nothing was retrieved). */
  fileChat?: boolean;
  maxTokens: number;
  /** Sampling temperature (0–2), when the caller chose one (the OpenAI-compatible API); else the model's default. */
  temperature?: number;
  signal?: AbortSignal;
}

export type StreamPart = { type: 'delta'; text: string } | { type: 'usage'; usage: Usage };

export interface EmbeddingResult {
  vectors: Float32Array[];
  tokens: number;
}

export interface AiProvider {
  readonly name: 'openai' | 'bedrock' | 'offline';
  readonly chatModel: string;
  readonly embeddingModel: string;
  readonly embeddingDimensions: number;
  /** The largest embedding request the provider accepts. */
  readonly embeddingLimits: { maxInputs: number; maxTokens: number };
  reply(input: ChatInput): Promise<{ text: string; usage: Usage }>;
  streamReply(input: ChatInput): AsyncIterable<StreamPart>;
  embed(texts: string[], options?: { signal?: AbortSignal }): Promise<EmbeddingResult>;
}
