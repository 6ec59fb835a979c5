// XML parts read as a stream of elements and text, with saxes (docs/DECISIONS.md "OOXML
// readers"). OOXML parts never carry a document type declaration, so any `<!DOCTYPE` refuses the
// document (INVALID_DOCUMENT) before a single entity could be declared, let alone expanded or
// fetched: saxes itself never expands entities beyond the five predefined ones and never loads
// anything. Elements nest at most `limits.maxDepth` deep (TOO_COMPLEX past that).

import { SaxesParser } from 'saxes';
import { ReadRefused, type ReaderLimits } from '../reader.ts';
import type { OoxmlPackage } from './package.ts';
import { unfinishedTail } from '../utf8.ts';

export interface XmlElement {
  /** The local name (`w:p` → `p`): OOXML's prefixes are customary, not fixed. */
  local: string;
  /** Attributes by qualified name as written. */
  attributes: Record<string, string>;
}

export interface XmlHandlers {
  open?(element: XmlElement, depth: number): void;
  close?(local: string, depth: number): void;
  text?(text: string): void;
  /**
   * Elements whose whole subtree reaches no handler (the subtrees whose text is not the
   * document's). The parser passes over them itself: a wrapper around the handlers would cost a
   * call more on every event of every part.
   */
  skip?: ReadonlySet<string>;
}

/** An attribute by local name, whatever its prefix (`r:id`, `w:val`, `val`). */
export function attr(element: XmlElement, local: string): string | undefined {
  const attributes = element.attributes;
  const direct = attributes[local];
  if (direct !== undefined) return direct;
  // Only a prefixed name can match below: the few attributes of a tag are looked through on a miss,
  // cheaper than noting each attribute's prefix as the parser reads it.
  for (const name in attributes) {
    // `prefix:local`: the name's first colon stands just before `local`.
    const colon = name.length - local.length - 1;
    if (colon >= 0 && name.charCodeAt(colon) === 0x3a && name.endsWith(local) && name.indexOf(':') === colon) {
      if (!name.startsWith('xmlns')) return attributes[name];
    }
  }
  return undefined;
}

// Each tag's name is a new string: its local name is looked up rather than cut again, and is the
// engine's one copy of that name, so the handlers' switches compare it by reference, not by content
// (on a Word body that cuts the handlers' cost by a third). Kept across parts and documents (a deck
// is hundreds of parts), emptied when full (OOXML uses a few hundred names; a hostile part, any).
const localNames = new Map<string, string>();
const MAX_LOCAL_NAMES = 4096;

function localNameOf(name: string): string {
  if (localNames.size >= MAX_LOCAL_NAMES) localNames.clear();
  const local = internalised(localOf(name));
  localNames.set(name, local);
  return local;
}

/** The engine's one copy of a string (a property key's), which compares with literals by reference. */
const internalised = (name: string): string => Object.keys({ [name]: 0 })[0] ?? name;

const localOf = (name: string) => {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
};

/** Reads one part of the package as XML, in 64 KB pieces of its inflated bytes. */
export function readXmlPart(pkg: OoxmlPackage, partName: string, limits: ReaderLimits, handlers: XmlHandlers): void {
  parseXml(pkg.chunks(partName), partName, limits, handlers);
}

/** Parses XML from byte chunks (UTF-8, or UTF-16 with its byte order mark). */
export function parseXml(
  chunks: Iterable<Uint8Array>,
  partName: string,
  limits: ReaderLimits,
  handlers: XmlHandlers,
): void {
  const parser = new SaxesParser({ xmlns: false, position: false });
  let depth = 0;
  parser.on('doctype', () => {
    throw new ReadRefused(
      'INVALID_DOCUMENT',
      `The file is not a valid Office document: its part ${partName} declares a document type, which Office parts never do.`,
    );
  });
  // The local names of the open elements by depth (a close tag is always the innermost open one's).
  const locals: string[] = [''];
  // One element object, refilled for each open tag: handlers read it and keep nothing of it.
  const element: XmlElement = { local: '', attributes: {} };
  const { open, close, text, skip } = handlers;
  let skipUntil = 0; // the depth of a skipped subtree's root, 0 outside one
  parser.on('opentag', (tag) => {
    depth += 1;
    if (depth > limits.maxDepth) {
      throw new ReadRefused(
        'TOO_COMPLEX',
        `The document is too complex to read: its part ${partName} nests elements more than ${limits.maxDepth} deep.`,
      );
    }
    if (skipUntil) return;
    const local = localNames.get(tag.name) ?? localNameOf(tag.name);
    if (skip?.has(local)) {
      skipUntil = depth;
      return;
    }
    locals[depth] = local;
    if (open) {
      element.local = local;
      element.attributes = tag.attributes as Record<string, string>;
      open(element, depth);
    }
  });
  parser.on('closetag', () => {
    if (!skipUntil) close?.(locals[depth]!, depth);
    else if (depth === skipUntil) skipUntil = 0;
    depth -= 1;
  });
  if (text) {
    const onText = (piece: string) => {
      if (!skipUntil) text(piece);
    };
    parser.on('text', onText);
    parser.on('cdata', onText);
  }
  parser.on('error', (error) => {
    throw new ReadRefused(
      'INVALID_DOCUMENT',
      `The file is not a valid Office document: its part ${partName} is not well-formed XML (${error.message.slice(0, 120)}).`,
    );
  });

  for (const text of decodeChunks(chunks)) parser.write(text);
  parser.close();
}

/** The text of a part's byte chunks: UTF-8, or UTF-16 with its byte order mark (a UTF-8 BOM dropped). */
export function* decodeChunks(chunks: Iterable<Uint8Array>): Generator<string> {
  let decoder: InstanceType<typeof TextDecoder> | undefined;
  let utf8: InstanceType<typeof TextDecoder> | undefined;
  let carried: Uint8Array | undefined; // a UTF-8 sequence the previous chunk cut short
  for (const chunk of chunks) {
    let bytes = chunk;
    if (!decoder && !utf8) {
      const encoding = encodingOf(chunk);
      if (encoding !== 'utf-8') decoder = new TextDecoder(encoding);
      else {
        utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
        // The BOM dropped, as a decoder does at the start of its stream (and only there).
        if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) bytes = chunk.subarray(3);
      }
    }
    if (decoder) {
      const text = decoder.decode(chunk, { stream: true });
      if (text) yield text;
      continue;
    }
    const piece = decodeWhole(utf8!, carried?.length ? concat(carried, bytes) : bytes);
    carried = piece.carried;
    if (piece.text) yield piece.text;
  }
  const rest = decoder ? decoder.decode() : carried?.length ? utf8!.decode(carried) : '';
  if (rest) yield rest;
}

/**
 * UTF-8 decoded chunk by chunk without the decoder's streaming mode (many times slower): each
 * chunk is decoded up to the sequence it cuts short, which starts the next one. Cutting before a
 * byte that starts a sequence never changes the text, broken sequences' U+FFFD included.
 */
function decodeWhole(
  decoder: InstanceType<typeof TextDecoder>,
  bytes: Uint8Array,
): { text: string; carried: Uint8Array } {
  const keep = bytes.length - unfinishedTail(bytes);
  return { text: decoder.decode(bytes.subarray(0, keep)), carried: bytes.slice(keep) };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** UTF-16 when the part starts with its byte order mark, else UTF-8 (the decoder drops a UTF-8 BOM). */
function encodingOf(first: Uint8Array): string {
  if (first[0] === 0xff && first[1] === 0xfe) return 'utf-16le';
  if (first[0] === 0xfe && first[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}
