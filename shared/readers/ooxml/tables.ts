// A table as Word and PowerPoint hold it: rows of different widths, some without text.

/** A table's rows as a reader closes its cells (`tc`) and rows (`tr`); each reader adds its open cell. */
export class TableRows {
  rows: string[][] = [];
  /** The row open in the table (undefined between rows). */
  row: string[] | undefined = undefined;

  openRow(): void {
    this.row = [];
  }

  /** A closed cell's text ('' for a merged cell's continuation), and a blank for each column more it spans. */
  addCell(text: string, span = 1): void {
    if (!this.row) return;
    this.row.push(text);
    for (let k = 1; k < span; k++) this.row.push('');
  }

  closeRow(): void {
    if (this.row) this.rows.push(this.row);
    this.row = undefined;
  }
}

/** A table's rows padded to one width, rows without any text left out; undefined when none is left. */
export function squareTable(rows: string[][]): string[][] | undefined {
  const kept = rows.filter((row) => row.some(Boolean));
  let width = 0;
  for (const row of kept) width = Math.max(width, row.length);
  // A row already as wide is kept as it is (the rows are the reader's own, read once).
  const padded = (row: string[]) =>
    row.length === width ? row : [...row, ...Array<string>(width - row.length).fill('')];
  return kept.length > 0 ? kept.map(padded) : undefined;
}
