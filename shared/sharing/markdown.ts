// Text as Markdown that shows it literally: whatever a message holds (`#`, ``` fences, HTML,
// list markers, link syntax) cannot open a heading, a code block or a link of the document it is
// put in. CommonMark lets a backslash escape any ASCII punctuation, so escaping is always safe;
// only what could start a construct is escaped, so the file stays readable as plain text.

/** Characters that open or close inline constructs anywhere in a line. */
const INLINE = /[\\`*_[\]<>|~&!#]/g;
/** What opens a block at the start of a line: a list item, a setext underline, an ordered item. */
const LINE_START = /^(\s*)([-+=]|\d+(?=[.)]))/;

/** One line of text, escaped; leading spaces kept as they are read (no indented code block). */
function escapeLine(line: string): string {
  const escaped = line
    .replace(INLINE, '\\$&')
    .replace(LINE_START, (_, space: string, mark: string) =>
      /^\d/.test(mark) ? `${space}${mark}\\` : `${space}\\${mark}`,
    );
  // Four leading spaces (or a tab) would start a code block: non-breaking spaces read the same.
  return escaped.replace(/^[ \t]+/, (s) => s.replaceAll('\t', '    ').replaceAll(' ', '\u00a0'));
}

/** Text in a paragraph: escaped, its line breaks kept (hard breaks), blank lines as paragraph breaks. */
export function markdownText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((paragraph) => paragraph.split('\n').map(escapeLine).join('  \n'))
    .filter((paragraph) => paragraph.trim() !== '')
    .join('\n\n');
}

/** Text on one line (a heading, a list item): line breaks become spaces. */
export const markdownInline = (text: string) => escapeLine(text.replace(/\s+/g, ' ').trim());

/** Text as a block quote (every line prefixed). */
export const markdownQuote = (text: string, indent = '') =>
  markdownText(text)
    .split('\n')
    .map((line) => `${indent}> ${line}`)
    .join('\n');
