import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';

// Token counting for the chunker: cl100k_base, the encoding of OpenAI's embedding models, so the
// counts match what the embedding API bills and limits. Only pdf-extract imports this module
// (the encoding's tables are about 1 MB; API bundles must not carry them).

// Text that spells a special token ("<|endoftext|>") is ordinary text in a PDF, not a control token.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

export const countTextTokens = (text: string): number => countTokens(text, AS_TEXT);
