import type { ChunkPlace } from '../files/chunk-repository.ts';
import type { PartLocation } from '../readers/reader.ts';

// Where a quote sits in its document, in the words of its format (docs/DECISIONS.md "Documents,
// not only PDFs"): a PDF's page; a slide; a sheet and the A1 range of the rows the quote is on; the
// heading path of a section (the reader's path of the part, deepened by the chunk's own headings).

const SECTION_JOINER = ' > ';

export function quoteLocation(
  places: readonly ChunkPlace[] | undefined,
  part: number,
  position: { charStart: number; charEnd: number } | undefined,
  section: string | undefined,
): PartLocation {
  const place = places?.find((p) => p.part === part);
  if (!place) return { type: 'page', page: part };
  const location = place.location;
  if (location.type === 'sheet' && place.rowStarts?.length && place.columns && position) {
    const rowAt = (offset: number) => {
      let row = place.rowStarts![0]![1];
      for (const [start, r] of place.rowStarts!) if (start <= offset) row = r;
      return row;
    };
    const first = rowAt(position.charStart);
    const last = rowAt(Math.max(position.charStart, position.charEnd - 1));
    const [from, to] = place.columns;
    return { ...location, range: `${from}${Math.min(first, last)}:${to}${Math.max(first, last)}` };
  }
  if (location.type === 'section' && section) {
    const prefix = location.path.join(SECTION_JOINER);
    const deeper = !prefix
      ? section
      : section.startsWith(`${prefix}${SECTION_JOINER}`)
        ? section.slice(prefix.length + SECTION_JOINER.length)
        : '';
    if (deeper && !deeper.endsWith('…'))
      return { type: 'section', path: [...location.path, ...deeper.split(SECTION_JOINER)] };
  }
  return location;
}
