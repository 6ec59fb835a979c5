// Markdown → blocks (docs/DECISIONS.md "Markup and text readers"): markdown-it's block tokens
// (CommonMark with GFM tables), read in one pass: headings stay headings, paragraphs, list items,
// quotes and code blocks read as prose, tables as rows with their header first, and HTML blocks
// through the HTML reader (a README's `<h1 align="center">` is a heading). Links and images are
// never followed: their text is read, nothing is fetched (markdown-it only parses).

import MarkdownIt from 'markdown-it';
import type { Env, MarkdownIt as MarkdownParser, Token } from 'markdown-it';
import { type DocumentReader, ReadRefused, type ReaderLimits } from '../reader.ts';
import { readHtml } from './html.ts';
import { type SectionBlock, sectionParts } from '../sections.ts';
import { checkTextLength, decodeDocument } from './text.ts';

/** A YAML front matter block (`---` … `---` or `...`) opening the file: metadata, not text. */
const FRONT_MATTER = /^---[ \t]*\r?\n(?:[^\n]*\n){0,200}?(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

/**
 * The text of an inline token, parsed only now (and its tokens dropped at once, so a long document
 * never holds every inline token): text and code, line breaks (and `<br>`) as spaces, markup and images left out.
 */
function inlineText(parser: MarkdownParser, env: Env, token: Token | undefined): string {
  if (!token?.content) return '';
  const children: Token[] = [];
  parser.inline.parse(token.content, parser, env, children);
  let text = '';
  for (const child of children) {
    if (child.type === 'text' || child.type === 'text_special' || child.type === 'code_inline') text += child.content;
    else if (child.type === 'softbreak' || child.type === 'hardbreak') text += ' ';
    else if (child.type === 'html_inline' && /^<br\b/i.test(child.content)) text += ' ';
  }
  return text;
}

/** A markdown-it instance whose block nesting stops at `maxDepth` (past it, the rest is unread). */
function parserFor(maxDepth: number): MarkdownParser {
  const known = parsers.get(maxDepth);
  if (known) return known;
  const parser = new MarkdownIt('default', {
    html: true, // HTML blocks become tokens read below; nothing in them is rendered or fetched
    linkify: false,
    typographer: false,
    maxNesting: maxDepth,
  });
  parsers.set(maxDepth, parser);
  return parser;
}
const parsers = new Map<number, MarkdownParser>();

/** The Markdown's blocks in reading order; ReadRefused TOO_COMPLEX past `maxDepth` or `maxTextChars`. */
export function markdownBlocks(markdown: string, limits: ReaderLimits): SectionBlock[] {
  checkTextLength(markdown.length, limits);
  // markdown-it's own first step (line breaks, NULs), then its block rules only: inline content is
  // parsed block by block below, with the link references the block rules collected in `env`.
  const source = markdown.replace(FRONT_MATTER, '').replace(/\r\n?/g, '\n').replaceAll('\0', '\ufffd');
  const parser = parserFor(limits.maxDepth);
  const env: Env = {};
  const tokens: Token[] = [];
  parser.block.parse(source, parser, env, tokens);
  const found: SectionBlock[] = [];
  let table: { rows: string[][]; row: string[] | undefined } | undefined;
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k]!;
    // markdown-it silently leaves unread what nests past maxNesting: refuse instead.
    if (token.level >= limits.maxDepth - 1)
      throw new ReadRefused('TOO_COMPLEX', `The document nests blocks more than ${limits.maxDepth} deep.`);
    switch (token.type) {
      case 'heading_open':
        found.push({
          kind: 'heading',
          text: inlineText(parser, env, tokens[k + 1]),
          level: Number(token.tag.slice(1)),
        });
        k++;
        break;
      case 'inline':
        if (table?.row) table.row.push(inlineText(parser, env, token));
        else if (!table) found.push({ kind: 'prose', text: inlineText(parser, env, token) });
        break;
      case 'fence':
      case 'code_block':
        found.push({ kind: 'prose', text: token.content });
        break;
      case 'html_block':
        found.push(...readHtml(token.content, limits).blocks);
        break;
      case 'table_open':
        table = { rows: [], row: undefined };
        break;
      case 'tr_open':
        if (table) table.row = [];
        break;
      case 'tr_close':
        if (table?.row) table.rows.push(table.row);
        if (table) table.row = undefined;
        break;
      case 'table_close':
        if (table) found.push({ kind: 'table', rows: table.rows }); // thead's row comes first
        table = undefined;
        break;
    }
  }
  return found;
}

/** A Markdown document's parts, from its decoded text. */
export const markdownParts = (markdown: string, limits: ReaderLimits) => sectionParts(markdownBlocks(markdown, limits));

export const markdownReader: DocumentReader = {
  format: 'markdown',
  async read(bytes, limits) {
    return markdownParts(decodeDocument(bytes, limits), limits);
  },
};
