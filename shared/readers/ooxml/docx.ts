// Word documents (docs/DECISIONS.md "OOXML readers"): the body's paragraphs and tables in order,
// read as a stream from word/document.xml. A paragraph is a heading when its style (or a style it
// is based on) is named "heading N" or "Title", or carries an outline level, so localised style
// ids (Titre1, Überschrift1) read as headings too; lists read as prose; a table's first row is its
// header, a merged cell's continuation blank. Text boxes read inside their paragraph, once (the
// compatibility fallback copy is skipped); deleted revisions and field codes are not text.
// Footnotes and endnotes follow the body, each kind under a heading of its own (where a citation
// of one says it is); headers, footers and comments are not read (docs/DECISIONS.md).
// Nothing the document references (images, hyperlinks, templates) is fetched: only its text is read.

import type { DocumentPart, DocumentReader, ReaderLimits } from '../reader.ts';
import { type OpenedDocument, openAs } from './detect.ts';
import { firstOfKind, normalise, readRelationships, TextBudget } from './opc.ts';
import type { OoxmlPackage } from './package.ts';
import { type SectionBlock as SectionItem, sectionParts } from '../sections.ts';
import { squareTable, TableRows } from './tables.ts';
import { attr, readXmlPart, type XmlHandlers } from './xml.ts';

/** A paragraph being read (every field set at creation, so each has one shape). */
class Paragraph {
  text = '';
  style: string | undefined = undefined;
  outline: number | undefined = undefined;
}

/** Subtrees whose text is not the document's: a compatibility copy, deletions, field codes, control properties. */
const NOT_THE_DOCUMENTS_TEXT = new Set(['Fallback', 'del', 'moveFrom', 'delText', 'instrText', 'sdtPr']);

/** Whether raw paragraph text holds more than whitespace (most paragraphs start with a letter). */
const hasText = (text: string) => text.length > 0 && (text.charCodeAt(0) > 0x20 || text.trim() !== '');

/** A table being read: its rows, and the cell open in it (undefined outside one). */
class Table extends TableRows {
  cell: string | undefined = undefined;
  span = 1;
  merged = false;

  openCell(): void {
    this.cell = '';
    this.span = 1;
    this.merged = false;
  }
}

export const docxReader: DocumentReader = {
  format: 'docx',
  async read(bytes: Uint8Array, limits: ReaderLimits): Promise<DocumentPart[]> {
    return readDocx(openAs(bytes, limits, 'docx'), limits);
  },
};

/** The parts of a package opened as docx (format detection opens it once for both). */
export function readDocx({ pkg, mainPart }: OpenedDocument, limits: ReaderLimits): DocumentPart[] {
  const rels = readRelationships(pkg, mainPart, limits);
  const stylesPart = firstOfKind(pkg, rels, 'styles');
  const levelOf = headingLevels(stylesPart ? readStyles(pkg, stylesPart, limits) : new Map());
  const budget = new TextBudget(limits.maxTextChars);
  const items = readBody(pkg, mainPart, limits, levelOf, budget);
  for (const [kind, heading] of NOTES) {
    const part = firstOfKind(pkg, rels, kind);
    // A note's paragraphs read as prose whatever their style; the separators hold no text.
    const notes = part ? readBody(pkg, part, limits, () => undefined, budget) : [];
    if (notes.length > 0) items.push({ kind: 'heading', text: heading, level: 1 }, ...notes);
  }
  return sectionParts(items);
}

/** The note parts read after the body (by relationship kind), and the heading each kind goes under. */
const NOTES = [
  ['footnotes', 'Footnotes'],
  ['endnotes', 'Endnotes'],
] as const;

/**
 * A part's paragraphs and tables (the body's, or the notes') as headings, prose and tables, in
 * order, its text spent from the document's budget. Its handlers run for every element of the
 * part: the innermost open paragraph and table are kept at hand rather than looked up each time.
 */
function readBody(
  pkg: OoxmlPackage,
  mainPart: string,
  limits: ReaderLimits,
  levelOf: (paragraph: Paragraph) => number | undefined,
  budget: TextBudget,
): SectionItem[] {
  const items: SectionItem[] = [];
  const paragraphs: Paragraph[] = [];
  const tables: Table[] = [];
  let paragraph: Paragraph | undefined; // paragraphs' last, the innermost open one
  let table: Table | undefined; // tables' last
  let inText = false;
  let inProperties = false;

  const closeParagraph = (closed: Paragraph) => {
    // Normalised once, where it becomes a block (sectionParts) or a cell; its raw length is spent.
    const text = closed.text;
    budget.spend(text.length);
    // A text box's paragraph reads inside the paragraph that holds it.
    if (paragraph) paragraph.text += ` ${text} `;
    else if (table?.cell !== undefined) table.cell = table.cell ? `${table.cell} ${text}` : text;
    else if (hasText(text)) {
      const level = levelOf(closed);
      items.push(level === undefined ? { kind: 'prose', text } : { kind: 'heading', text, level });
    }
  };
  const closeTable = (closed: Table) => {
    const rows = squareTable(closed.rows);
    if (table?.cell !== undefined) {
      // A table inside a cell reads as that cell's text.
      const text = (rows ?? []).map((row) => row.filter(Boolean).join(' ')).join(' ');
      table.cell = table.cell ? `${table.cell} ${text}` : text;
    } else if (rows) items.push({ kind: 'table', rows });
  };

  const handlers: XmlHandlers = {
    skip: NOT_THE_DOCUMENTS_TEXT,
    open(element) {
      switch (element.local) {
        case 'p':
          paragraph = new Paragraph();
          paragraphs.push(paragraph);
          break;
        case 'pPr':
          inProperties = true;
          break;
        case 'pStyle':
          if (paragraph && inProperties) paragraph.style = attr(element, 'val');
          break;
        case 'outlineLvl':
          if (paragraph && inProperties) paragraph.outline = Number(attr(element, 'val'));
          break;
        case 't':
          inText = true;
          break;
        case 'tab':
        case 'br':
        case 'cr':
          if (paragraph && !inProperties) paragraph.text += ' ';
          break;
        case 'tbl':
          table = new Table();
          tables.push(table);
          break;
        case 'tr':
          table?.openRow();
          break;
        case 'tc':
          table?.openCell();
          break;
        case 'gridSpan':
          if (table) table.span = Math.max(1, Math.min(64, Number(attr(element, 'val')) || 1));
          break;
        case 'vMerge':
          if (table) table.merged = (attr(element, 'val') ?? 'continue') === 'continue';
          break;
      }
    },
    close(local) {
      switch (local) {
        case 'p': {
          const closed = paragraphs.pop();
          paragraph = paragraphs[paragraphs.length - 1];
          if (closed) closeParagraph(closed);
          break;
        }
        case 'pPr':
          inProperties = false;
          break;
        case 't':
          inText = false;
          break;
        case 'tc':
          if (table?.cell !== undefined) table.addCell(table.merged ? '' : normalise(table.cell), table.span);
          if (table) table.cell = undefined;
          break;
        case 'tr':
          table?.closeRow();
          break;
        case 'tbl': {
          const closed = tables.pop();
          table = tables[tables.length - 1];
          if (closed) closeTable(closed);
          break;
        }
      }
    },
    text(text) {
      if (inText && paragraph) paragraph.text += text;
    },
  };
  readXmlPart(pkg, mainPart, limits, handlers);
  return items;
}

interface Style {
  name?: string;
  basedOn?: string;
  outline?: number;
}

/** word/styles.xml: each paragraph style's name, parent and outline level, by style id. */
function readStyles(pkg: OoxmlPackage, part: string, limits: ReaderLimits): Map<string, Style> {
  const styles = new Map<string, Style>();
  let current: Style | undefined;
  readXmlPart(pkg, part, limits, {
    open(element) {
      switch (element.local) {
        case 'style': {
          const id = attr(element, 'styleId');
          current = id !== undefined && attr(element, 'type') !== 'character' ? {} : undefined;
          if (current && id !== undefined) styles.set(id, current);
          break;
        }
        case 'name':
          if (current) current.name = attr(element, 'val');
          break;
        case 'basedOn':
          if (current) current.basedOn = attr(element, 'val');
          break;
        case 'outlineLvl':
          if (current) current.outline = Number(attr(element, 'val'));
          break;
      }
    },
    close(local) {
      if (local === 'style') current = undefined;
    },
  });
  return styles;
}

/** A paragraph's heading level (1..9), or undefined for body text. */
function headingLevels(styles: Map<string, Style>): (paragraph: Paragraph) => number | undefined {
  const fromOutline = (outline: number | undefined) =>
    outline !== undefined && Number.isInteger(outline) && outline >= 0 && outline <= 8 ? outline + 1 : undefined;
  const fromName = (name: string | undefined) => {
    const heading = /^heading\s*([1-9])$/i.exec(name ?? '');
    if (heading) return Number(heading[1]);
    return /^title$/i.test(name ?? '') ? 1 : undefined;
  };
  const ofStyle = (id: string, hops: number): number | undefined => {
    const style = styles.get(id);
    if (!style) return fromName(id);
    const level = fromName(style.name) ?? fromOutline(style.outline);
    if (level !== undefined || !style.basedOn || hops >= 10) return level;
    return ofStyle(style.basedOn, hops + 1);
  };
  return (paragraph) => fromOutline(paragraph.outline) ?? (paragraph.style ? ofStyle(paragraph.style, 0) : undefined);
}
