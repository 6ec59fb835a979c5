// UTF-8 cut into pieces (a file's first bytes, a package part read in chunks): a piece may end
// inside a character, whose first bytes then belong with the next piece (or nowhere).

/** Bytes at the end of `bytes` that start a UTF-8 sequence the cut left unfinished (0 to 3). */
export function unfinishedTail(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}
