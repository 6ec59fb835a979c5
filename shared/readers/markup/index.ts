// The markup and text readers (docs/DECISIONS.md "Markup and text readers"): HTML, Markdown and
// plain text, each bytes → sections, and what format detection needs to tell them apart.

export { type MarkupFormat, detectMarkup, markupOfDecoded } from './detect.ts';
export { htmlParts, htmlReader } from './html.ts';
export { markdownParts, markdownReader } from './markdown.ts';
export { readPlainText, textReader } from './plain.ts';
export { decodeDocument, decodeText, looksLikeText } from './text.ts';
