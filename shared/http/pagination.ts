import { encodeCursor, type Key } from '../dynamo.ts';

// The next page's cursor travels in a response header (list bodies stay bare arrays); the
// cursors themselves are made and checked where the lists are read (shared/dynamo.ts).

/** The response header carrying the next page's cursor, when there is one. */
function nextCursorHeader(lastKey: Key | undefined): Record<string, string> {
  const cursor = encodeCursor(lastKey);
  return cursor ? { 'x-next-cursor': cursor } : {};
}

/** A page as a list response: the items as the body, the next page's cursor in its header. */
export const pageResponse = <T>(page: { items: T[]; lastKey?: Key }) => ({
  data: page.items,
  headers: nextCursorHeader(page.lastKey),
});
