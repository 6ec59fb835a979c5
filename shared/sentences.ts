// Text normalisation and sentence splitting, shared by the chunker (pdf-extract) and by
// retrieval (quotes), so a quote is always cut on the same boundaries the chunker used.
// No tokenizer here: this module is imported by API bundles.

/** One line of text: whitespace runs (line breaks included) become single spaces. */
export function normalizeText(text: string): string {
  return text.replace(/[\s\u00a0]+/g, ' ').trim();
}

// A sentence ends at . ! ? or … (closing quotes and brackets kept with it) followed by space,
// or at the CJK full stops 。！？ (closing brackets kept), which need no space after them.
const SENTENCE_END = /(?<=[.!?…]["'”’»)\]]*)\s+|(?<=[。！？][」』）】]*)\s*(?=\S)/u;

/** Sentences of normalised text, each without surrounding spaces; joined by ' ' they give the text back. */
export function splitSentences(text: string): string[] {
  return text.split(SENTENCE_END).filter((s) => s.length > 0);
}
