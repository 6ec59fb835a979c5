// The markup and text readers (docs/DECISIONS.md "Markup and text readers"): HTML, Markdown and
// plain text, each bytes → sections, and what format detection needs to tell them apart.

export { type MarkupFormat, detectMarkup } from './detect.ts';
export { htmlReader } from './html.ts';
export { markdownReader } from './markdown.ts';
export { textReader } from './plain.ts';
export { decodeText, looksLikeText } from './text.ts';
