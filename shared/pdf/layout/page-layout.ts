import { joinItems, normalisePageText } from '../normalise.ts';
import { type LayoutItem, type Line, lineItems, pageLines } from './lines.ts';
import { bodyStyle, headingAt } from './sections.ts';
import { findTables, type Table } from './tables.ts';
import { blockText, markdownRow, partTextOf, type PartBlock, type TracedText } from '../../readers/reader.ts';

// A page's structure from its text items: prose, headings and tables (as Markdown rows), in
// reading order, and the page's text made of them. Each piece of text keeps the indices of the
// items it came from (in the list given), so a place in the page text can be traced back to
// items. A page with neither a table nor a heading has no layout: its text is the plain
// normalised text (normalise.ts), as before.

// The blocks are the readers' part blocks (shared/readers/reader.ts): a PDF page is a part.
export type { TracedText } from '../../readers/reader.ts';
export type PageBlock = PartBlock;

export interface PageLayout {
  /** The page's normalised text: blocks joined, table rows on lines of their own. */
  text: string;
  blocks: PageBlock[];
}

/** The page's layout, or undefined when it has neither a table nor a heading. */
export function readPageLayout(items: readonly LayoutItem[]): PageLayout | undefined {
  const lines = pageLines(items);
  const tables = findTables(lines);
  const body = bodyStyle(lines);
  const blocks: PageBlock[] = [];
  let prose: Line[] = [];
  let headings = 0;
  const flushProse = () => {
    if (prose.length) blocks.push(proseBlock(items, prose));
    prose = [];
  };
  let table = 0;
  for (let at = 0; at < lines.length; at++) {
    const next = tables[table];
    if (next && at === next.from) {
      flushProse();
      blocks.push(tableBlock(next));
      at = next.to - 1;
      table++;
      continue;
    }
    const heading = headingAt(lines, at, body);
    if (!heading) {
      prose.push(lines[at]!);
      continue;
    }
    flushProse();
    headings++;
    const text = normalisePageText(joinItems(items.slice(lines[at]!.from, lines[at]!.to)));
    const last = blocks.at(-1);
    // A heading wrapped over two lines is one heading.
    if (last?.kind === 'heading' && last.styled === heading.styled && Math.abs(last.size - heading.size) < 0.5) {
      last.text = `${last.text} ${text}`;
      last.lines.push(traced(lines[at]!));
    } else blocks.push({ kind: 'heading', ...heading, text, lines: [traced(lines[at]!)] });
  }
  if (!tables.length && !headings) return undefined; // before the prose is joined: plain pages cost no more
  flushProse();
  const kept = blocks.filter((b) => b.kind !== 'text' || b.text);
  return { text: partTextOf(kept), blocks: kept };
}

const traced = (line: Line): TracedText => ({ text: line.text, items: lineItems(line) });

function proseBlock(items: readonly LayoutItem[], lines: Line[]): PageBlock {
  // Prose lines are consecutive: one slice of the items from the first line to the last.
  const raw = joinItems(items.slice(lines[0]!.from, lines.at(-1)!.to));
  return { kind: 'text', text: normalisePageText(raw), lines: lines.map(traced) };
}

// Cells are normalised in one pass per table, joined by private-use characters that neither NFKC
// nor the whitespace rules touch.
const CELL_END = '\ue000';
const ROW_END = '\ue001';

function tableBlock(table: Table): PageBlock {
  const joined = table.rows.map((row) => row.map((cell) => cell?.text ?? '').join(CELL_END)).join(ROW_END);
  const texts = normalisePageText(joined)
    .split(ROW_END)
    .map((row) => row.split(CELL_END).map((cell) => cell.trim()));
  return {
    kind: 'table',
    rows: table.rows.map((row, r) => {
      const cells = row.map((cell, k) => ({ text: texts[r]?.[k] ?? '', items: cell?.items ?? [] }));
      return { text: markdownRow(cells.map((c) => c.text)), cells };
    }),
  };
}

export { blockText, markdownRow, partTextOf as pageTextOf };
