// Which markup text bytes hold, from the bytes alone, never from a file name (docs/DECISIONS.md
// "Markup and text readers"): HTML when the text opens with HTML; Markdown when enough of its
// lines have Markdown's structure; any other text is plain text. Only the start is judged (the
// first 64 KiB, as `looksLikeText` reads), so detection costs the same for any size of file.

import { looksLikeText, TEXT_SNIFF_BYTES } from './text.ts';

export type MarkupFormat = 'html' | 'markdown' | 'text';

/** Lines of the prefix that are judged. */
const SNIFF_LINES = 2_000;

/** The prefix as text: a sequence the cut split at its end decodes to U+FFFD, which is harmless here. */
function prefixText(bytes: Uint8Array): string {
  const prefix = bytes.subarray(0, TEXT_SNIFF_BYTES);
  if (prefix[0] === 0xff && prefix[1] === 0xfe) return new TextDecoder('utf-16le').decode(prefix);
  if (prefix[0] === 0xfe && prefix[1] === 0xff) return new TextDecoder('utf-16be').decode(prefix);
  return new TextDecoder('utf-8').decode(prefix);
}

// What opens an HTML document (or its head): nothing else starts so.
const HTML_DOCUMENT_START = /^<(?:!doctype\s+html|html|head|body|meta|title|base|link|style|script)(?=[\s/>])/i;
// Elements that open an HTML fragment; a Markdown file may open with them too (a README's centred
// logo), so they make HTML only when the text has no Markdown structure.
const HTML_FRAGMENT_START =
  /^<(?:main|article|section|header|nav|div|table|p|h[1-6]|ul|ol|dl|form|iframe|template|center|font)(?=[\s/>])/i;

/** What the text opens with (after a BOM, whitespace, comments and an XML declaration), if HTML. */
export function htmlStart(text: string): 'document' | 'fragment' | undefined {
  let rest = text.replace(/^\ufeff/, '');
  for (;;) {
    rest = rest.trimStart();
    if (rest.startsWith('<!--')) {
      const end = rest.indexOf('-->', 4);
      if (end < 0) return undefined;
      rest = rest.slice(end + 3);
    } else if (/^<\?xml\s/i.test(rest)) {
      const end = rest.indexOf('?>');
      if (end < 0) return undefined;
      rest = rest.slice(end + 2);
    } else if (HTML_DOCUMENT_START.test(rest)) return 'document';
    else return HTML_FRAGMENT_START.test(rest) ? 'fragment' : undefined;
  }
}

// Lines that only Markdown gives structure to: headings, fences, table delimiter rows, links.
const ATX_HEADING = /^ {0,3}#{1,6}[ \t]+\S/;
const FENCE = /^ {0,3}(?:`{3,}|~{3,})/;
const TABLE_DELIMITER = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)+\|?[ \t]*$/;
const SETEXT_UNDERLINE = /^ {0,3}(?:=+|-{2,})[ \t]*$/;
const INLINE_LINK = /!?\[[^\]\n]+\]\([^)\s]+(?:\s+"[^"]*")?\)/;
const LINK_DEFINITION = /^ {0,3}\[[^\]\n]+\]:[ \t]*\S/;
// Lines Markdown gives structure to but plain text has too: lists and quotes.
const LIST_ITEM = /^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S/;
const QUOTE = /^ {0,3}>/;

/** The characters a line with Markdown structure starts with (after spaces and tabs). */
const STRUCTURE_STARTS = new Set('#`~|:-=[>*+0123456789');

/** Whether text has Markdown structure in a meaningful share of its lines. */
export function looksLikeMarkdown(text: string): boolean {
  const lines = text.includes('\r') ? text.split(/\r\n|\r|\n/, SNIFF_LINES) : text.split('\n', SNIFF_LINES);
  let nonBlank = 0;
  let distinctive = 0;
  let structured = 0;
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!;
    let at = 0;
    while (at < line.length && (line.charCodeAt(at) === 0x20 || line.charCodeAt(at) === 0x09)) at++;
    if (at === line.length) continue;
    const first = line[at]!;
    if ((first <= ' ' || first > '~') && line.trim() === '') continue;
    nonBlank++;
    // Most lines of prose start with none of Markdown's marks: only an inline link can make them count.
    if (!STRUCTURE_STARTS.has(first)) {
      if (line.includes('](') && INLINE_LINK.test(line)) {
        distinctive++;
        structured++;
      }
      continue;
    }
    if (
      ATX_HEADING.test(line) ||
      FENCE.test(line) ||
      TABLE_DELIMITER.test(line) ||
      LINK_DEFINITION.test(line) ||
      INLINE_LINK.test(line) ||
      (SETEXT_UNDERLINE.test(line) && k > 0 && lines[k - 1]!.trim() !== '' && !LIST_ITEM.test(lines[k - 1]!))
    ) {
      distinctive++;
      structured++;
    } else if (LIST_ITEM.test(line) || QUOTE.test(line)) structured++;
  }
  // Two of Markdown's own marks, or one among a twentieth of lines with structure.
  return distinctive >= 2 || (distinctive >= 1 && structured >= 0.05 * nonBlank);
}

/** The markup the bytes hold, or undefined when they are not text (see `looksLikeText`). */
export function detectMarkup(bytes: Uint8Array): MarkupFormat | undefined {
  if (!looksLikeText(bytes)) return undefined;
  return markupOf(prefixText(bytes));
}

/**
 * The markup of a text decoded whole from `bytes` (the reader decodes once): judged from the same
 * prefix `detectMarkup` judges, which for a file of at most 64 KiB is the whole text.
 */
export function markupOfDecoded(bytes: Uint8Array, text: string): MarkupFormat {
  return markupOf(bytes.length <= TEXT_SNIFF_BYTES ? text : prefixText(bytes));
}

function markupOf(text: string): MarkupFormat {
  const start = htmlStart(text);
  if (start === 'document') return 'html';
  if (looksLikeMarkdown(text)) return 'markdown';
  return start === 'fragment' ? 'html' : 'text';
}
