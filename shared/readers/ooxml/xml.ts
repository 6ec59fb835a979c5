// XML parts read as a stream of elements and text, with saxes (docs/DECISIONS.md "OOXML
// readers"). OOXML parts never carry a document type declaration, so any `<!DOCTYPE` refuses the
// document (INVALID_DOCUMENT) before a single entity could be declared, let alone expanded or
// fetched: saxes itself never expands entities beyond the five predefined ones and never loads
// anything. Elements nest at most `limits.maxDepth` deep (TOO_COMPLEX past that).

import { SaxesParser } from 'saxes';
import { ReadRefused, type ReaderLimits } from '../reader.ts';
import type { OoxmlPackage } from './package.ts';

export interface XmlElement {
  /** The local name (`w:p` → `p`): OOXML's prefixes are customary, not fixed. */
  local: string;
  /** Attributes by qualified name as written. */
  attributes: Record<string, string>;
  /** Whether an attribute name has a prefix (`w:val`); when none has, `attr` looks no further than the name. */
  prefixed: boolean;
}

export interface XmlHandlers {
  open?(element: XmlElement, depth: number): void;
  close?(local: string, depth: number): void;
  text?(text: string): void;
}

/** An attribute by local name, whatever its prefix (`r:id`, `w:val`, `val`). */
export function attr(element: XmlElement, local: string): string | undefined {
  const attributes = element.attributes;
  const direct = attributes[local];
  if (direct !== undefined || !element.prefixed) return direct;
  for (const name in attributes) {
    // `prefix:local`: the name's first colon stands just before `local`.
    const colon = name.length - local.length - 1;
    if (colon >= 0 && name.charCodeAt(colon) === 0x3a && name.endsWith(local) && name.indexOf(':') === colon) {
      if (!name.startsWith('xmlns')) return attributes[name];
    }
  }
  return undefined;
}

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
  // Local names by qualified name: a part uses few element names, each many times.
  const knownLocals = new Map<string, string>();
  // One element object, refilled for each open tag: handlers read it and keep nothing of it.
  const element: XmlElement = { local: '', attributes: {}, prefixed: false };
  let prefixed = false; // whether the tag being read has an attribute with a prefix
  parser.on('attribute', ({ name }) => {
    if (!prefixed && name.includes(':')) prefixed = true;
  });
  parser.on('opentag', (tag) => {
    depth += 1;
    if (depth > limits.maxDepth) {
      throw new ReadRefused(
        'TOO_COMPLEX',
        `The document is too complex to read: its part ${partName} nests elements more than ${limits.maxDepth} deep.`,
      );
    }
    const name = tag.name;
    let local = knownLocals.get(name);
    if (local === undefined) {
      local = localOf(name);
      if (knownLocals.size < 512) knownLocals.set(name, local);
    }
    locals[depth] = local;
    if (handlers.open) {
      element.local = local;
      element.attributes = tag.attributes as Record<string, string>;
      element.prefixed = prefixed;
      handlers.open(element, depth);
    }
    prefixed = false;
  });
  parser.on('closetag', () => {
    handlers.close?.(locals[depth]!, depth);
    depth -= 1;
  });
  if (handlers.text) {
    const onText = handlers.text;
    parser.on('text', (text) => onText(text));
    parser.on('cdata', (text) => onText(text));
  }
  parser.on('error', (error) => {
    throw new ReadRefused(
      'INVALID_DOCUMENT',
      `The file is not a valid Office document: its part ${partName} is not well-formed XML (${error.message.slice(0, 120)}).`,
    );
  });

  let decoder: InstanceType<typeof TextDecoder> | undefined;
  for (const chunk of chunks) {
    if (!decoder) decoder = new TextDecoder(encodingOf(chunk));
    const text = decoder.decode(chunk, { stream: true });
    if (text) parser.write(text);
  }
  const rest = decoder?.decode() ?? '';
  if (rest) parser.write(rest);
  parser.close();
}

/** UTF-16 when the part starts with its byte order mark, else UTF-8 (the decoder drops a UTF-8 BOM). */
function encodingOf(first: Uint8Array): string {
  if (first[0] === 0xff && first[1] === 0xfe) return 'utf-16le';
  if (first[0] === 0xfe && first[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}
