// PowerPoint presentations (docs/DECISIONS.md "OOXML readers"): one part per slide, in the order
// of the presentation's slide list, so part n is slide n. A slide reads as its title (the title
// placeholder, as a heading), its other shapes' paragraphs as prose and its tables as tables, in
// the order the slide holds them, then its speaker notes under a heading "Notes", in the same part.
// Hidden slides are read like the others (their numbers stay the numbers PowerPoint shows).
// Pictures, media, charts and links are not read or fetched.

import {
  blocks,
  type DocumentPart,
  type DocumentReader,
  type PartBlock,
  partOf,
  type ReaderLimits,
} from '../reader.ts';
import { type OpenedDocument, openAs } from './detect.ts';
import { firstOfKind, normalise, readRelationships, relationshipIdOf, TextBudget } from './opc.ts';
import type { OoxmlPackage } from './package.ts';
import { squareTable, TableRows } from './tables.ts';
import { attr, readXmlPart, type XmlElement, type XmlHandlers } from './xml.ts';

const TITLE_PLACEHOLDERS = new Set(['title', 'ctrTitle']);
/** Notes-page placeholders that are not the notes: the slide image, number, header, footer, date. */
const NOT_NOTES = new Set(['sldImg', 'sldNum', 'hdr', 'ftr', 'dt']);
/** A compatibility copy (mc:Fallback): the same content again, for readers without the choice's features. */
const COMPATIBILITY_COPY = new Set(['Fallback']);

export const pptxReader: DocumentReader = {
  format: 'pptx',
  async read(bytes: Uint8Array, limits: ReaderLimits): Promise<DocumentPart[]> {
    return readPptx(openAs(bytes, limits, 'pptx'), limits);
  },
};

/** The parts of a package opened as pptx (format detection opens it once for both). */
export function readPptx({ pkg, mainPart }: OpenedDocument, limits: ReaderLimits): DocumentPart[] {
  const budget = new TextBudget(limits.maxTextChars);
  const parts = slideParts(pkg, mainPart, limits).map((slidePart, index) => {
    const slide = readShapes(pkg, slidePart, limits, budget, () => true);
    const notesPart = firstOfKind(pkg, readRelationships(pkg, slidePart, limits), 'notesSlide');
    const notes = notesPart
      ? readShapes(pkg, notesPart, limits, budget, (placeholder) => !NOT_NOTES.has(placeholder ?? ''))
      : undefined;
    const slideBlocks: PartBlock[] = [];
    if (slide.title) slideBlocks.push(blocks.heading(slide.title, 1));
    slideBlocks.push(...slide.body);
    if (notes && notes.body.length > 0) slideBlocks.push(blocks.heading('Notes', 2), ...notes.body);
    return partOf(slideBlocks, { type: 'slide', slide: index + 1, title: slide.title });
  });
  return parts.length > 0 ? parts : [partOf([], { type: 'slide', slide: 1 })];
}

/** The slides' part names in presentation order (ppt/presentation.xml's slide list and its rels). */
function slideParts(pkg: OoxmlPackage, mainPart: string, limits: ReaderLimits): string[] {
  const rels = readRelationships(pkg, mainPart, limits);
  const ids: string[] = [];
  readXmlPart(pkg, mainPart, limits, {
    open(element) {
      if (element.local === 'sldId') ids.push(relationshipIdOf(element.attributes) ?? '');
    },
  });
  return ids.flatMap((id) => {
    const rel = rels.get(id);
    return rel && rel.kind === 'slide' && !rel.external && pkg.has(rel.target) ? [rel.target] : [];
  });
}

interface Shape {
  placeholder?: string;
  paragraphs: string[];
}

/** A table being read: its rows, and the open cell's paragraphs (undefined outside one). */
class Table extends TableRows {
  cell: string[] | undefined = undefined;
  blank = false;

  /** A cell merged into the one before it (across or down) reads blank. */
  openCell(cell: XmlElement): void {
    this.cell = [];
    this.blank = attr(cell, 'hMerge') === '1' || attr(cell, 'vMerge') === '1';
  }
}

/**
 * A slide's (or notes page's) text: the title placeholder's text, and the body as prose and
 * table blocks in document order, from the shapes `keep` accepts (by placeholder type).
 */
function readShapes(
  pkg: OoxmlPackage,
  part: string,
  limits: ReaderLimits,
  budget: TextBudget,
  keep: (placeholder: string | undefined) => boolean,
): { title?: string; body: PartBlock[] } {
  const body: PartBlock[] = [];
  let title: string | undefined;
  let shape: Shape | undefined;
  let table: Table | undefined;
  let paragraph: string | undefined;
  let inText = false;

  const handlers: XmlHandlers = {
    skip: COMPATIBILITY_COPY,
    open(element) {
      switch (element.local) {
        case 'sp':
          shape = { paragraphs: [] };
          break;
        case 'ph':
          if (shape) shape.placeholder = attr(element, 'type') ?? 'body';
          break;
        case 'tbl':
          table = new Table();
          break;
        case 'tr':
          table?.openRow();
          break;
        case 'tc':
          table?.openCell(element);
          break;
        case 'p':
          paragraph = '';
          break;
        case 't':
          inText = true;
          break;
        case 'br':
          if (paragraph !== undefined) paragraph += ' ';
          break;
      }
    },
    close(local) {
      switch (local) {
        case 't':
          inText = false;
          break;
        case 'p': {
          const text = normalise(paragraph ?? '');
          paragraph = undefined;
          budget.spend(text.length);
          if (!text) break;
          if (table?.cell) table.cell.push(text);
          else if (shape) shape.paragraphs.push(text);
          break;
        }
        case 'tc':
          if (table?.cell) table.addCell(table.blank ? '' : table.cell.join(' '));
          if (table) table.cell = undefined;
          break;
        case 'tr':
          table?.closeRow();
          break;
        case 'tbl': {
          const rows = squareTable(table?.rows ?? []);
          if (rows && keep(undefined)) body.push(blocks.table(rows));
          table = undefined;
          break;
        }
        case 'sp':
          if (shape && keep(shape.placeholder)) {
            if (TITLE_PLACEHOLDERS.has(shape.placeholder ?? '') && title === undefined) {
              title = shape.paragraphs.join(' ') || undefined;
            } else body.push(...shape.paragraphs.map((text) => blocks.prose(text)));
          }
          shape = undefined;
          break;
      }
    },
    text(text) {
      if (inText && paragraph !== undefined) paragraph += text;
    },
  };
  readXmlPart(pkg, part, limits, handlers);
  return { title, body };
}
