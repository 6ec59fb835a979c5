// A table as Word and PowerPoint hold it: rows of different widths, some without text.

/** A table's rows padded to one width, rows without any text left out; undefined when none is left. */
export function squareTable(rows: string[][]): string[][] | undefined {
  const kept = rows.filter((row) => row.some(Boolean));
  const width = Math.max(0, ...kept.map((row) => row.length));
  return kept.length > 0 ? kept.map((row) => [...row, ...Array<string>(width - row.length).fill('')]) : undefined;
}
