// A table as Word and PowerPoint hold it: rows of different widths, some without text.

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
