// Plain text → parts (docs/DECISIONS.md "Markup and text readers"): paragraphs (runs of lines
// between blank lines) are the blocks, gathered into parts of about SECTION_TARGET_CHARS, cut
// between paragraphs. A paragraph longer than a part (a log, a file without blank lines) is cut
// between its lines first, and a line longer than that at a space.

import type { DocumentReader, ReaderLimits } from '../reader.ts';
import { type SectionBlock, SECTION_TARGET_CHARS, sectionParts } from '../sections.ts';
import { checkTextLength, decodeDocument } from './text.ts';

/** The text's paragraphs as prose blocks, a long paragraph in runs of whole lines. */
export function* textBlocks(text: string): Generator<SectionBlock> {
  for (const paragraph of text.split(/\r?\n[ \t\f\v\u00a0]*(?:\r?\n|$)|\r[ \t]*\r/)) {
    if (paragraph.length <= SECTION_TARGET_CHARS) {
      if (paragraph.trim()) yield { kind: 'prose', text: paragraph };
      continue;
    }
    let run = '';
    for (const line of paragraph.split(/\r?\n|\r/)) {
      if (run && run.length + line.length + 1 > SECTION_TARGET_CHARS) {
        yield { kind: 'prose', text: run };
        run = '';
      }
      run += `${line}\n`;
    }
    if (run.trim()) yield { kind: 'prose', text: run };
  }
}

/** The text's parts; ReadRefused TOO_COMPLEX past `maxTextChars`. */
export function readPlainText(text: string, limits: ReaderLimits) {
  checkTextLength(text.length, limits);
  return sectionParts(textBlocks(text));
}

export const textReader: DocumentReader = {
  format: 'text',
  async read(bytes, limits) {
    return readPlainText(decodeDocument(bytes, limits), limits);
  },
};
