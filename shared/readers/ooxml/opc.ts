// The package's own map (Open Packaging Conventions): the content types, the relationships from a
// part to others, and the budget of text a document may give. A relationship whose target is
// external (TargetMode="External": a hyperlink, a linked image, a remote template, another
// workbook) is kept only as a fact and never followed.

import { normaliseText, ReadRefused, type ReaderLimits } from '../reader.ts';
import type { OoxmlPackage } from './package.ts';
import { attr, readXmlPart } from './xml.ts';

export interface Relationship {
  id: string;
  /** The relationship type's last path segment (`officeDocument`, `slide`, `notesSlide`, …). */
  kind: string;
  /** The target part's name inside the package (no leading slash); the raw target when external. */
  target: string;
  external: boolean;
}

/** `word/document.xml` → `word/_rels/document.xml.rels`; the package's own → `_rels/.rels`. */
export function relsNameOf(partName: string): string {
  const slash = partName.lastIndexOf('/');
  return slash < 0 ? `_rels/${partName}.rels` : `${partName.slice(0, slash)}/_rels/${partName.slice(slash + 1)}.rels`;
}

/** A relationship target resolved against its source part's folder. */
export function resolveTarget(sourcePart: string, target: string): string {
  const base = target.startsWith('/') ? [] : sourcePart.split('/').slice(0, -1);
  for (const segment of target.split('/')) {
    if (segment === '..') base.pop();
    else if (segment !== '.' && segment !== '') base.push(segment);
  }
  return base.join('/');
}

/** The relationships of a part ('' for the package's own), by id; none when it has no rels part. */
export function readRelationships(
  pkg: OoxmlPackage,
  sourcePart: string,
  limits: ReaderLimits,
): Map<string, Relationship> {
  const relsName = sourcePart === '' ? '_rels/.rels' : relsNameOf(sourcePart);
  const out = new Map<string, Relationship>();
  if (!pkg.has(relsName)) return out;
  readXmlPart(pkg, relsName, limits, {
    open(element) {
      if (element.local !== 'Relationship') return;
      const id = attr(element, 'Id') ?? '';
      const type = attr(element, 'Type') ?? '';
      const target = attr(element, 'Target') ?? '';
      const external = (attr(element, 'TargetMode') ?? '').toLowerCase() === 'external';
      out.set(id, {
        id,
        kind: type.slice(type.lastIndexOf('/') + 1),
        target: external ? target : resolveTarget(sourcePart, target),
        external,
      });
    },
  });
  return out;
}

/** An element's relationship id (`r:id`, whatever the prefix the relationships namespace has). */
export function relationshipIdOf(attributes: Record<string, string>): string | undefined {
  for (const name in attributes) if (name.endsWith(':id') && !name.startsWith('xmlns')) return attributes[name];
  return undefined;
}

/** The first internal relationship of a kind whose target exists in the package. */
export function firstOfKind(pkg: OoxmlPackage, rels: Map<string, Relationship>, kind: string): string | undefined {
  for (const rel of rels.values()) if (rel.kind === kind && !rel.external && pkg.has(rel.target)) return rel.target;
  return undefined;
}

/** `[Content_Types].xml`: the content type of each part named by an override (part name → type). */
export function readContentTypes(pkg: OoxmlPackage, limits: ReaderLimits): Map<string, string> {
  const out = new Map<string, string>();
  readXmlPart(pkg, '[Content_Types].xml', limits, {
    open(element) {
      if (element.local !== 'Override') return;
      const name = attr(element, 'PartName');
      const type = attr(element, 'ContentType');
      if (name && type) out.set(name.replace(/^\/+/, '').toLowerCase(), type.trim().toLowerCase());
    },
  });
  return out;
}

/** Characters of text a document may still give (limits.maxTextChars); TOO_COMPLEX past it. */
export class TextBudget {
  private used = 0;
  constructor(private readonly limit: number) {}

  spend(chars: number): void {
    this.used += chars;
    if (this.used > this.limit) {
      throw new ReadRefused(
        'TOO_COMPLEX',
        `The document is too complex to read: it gives more than ${this.limit} characters of text.`,
      );
    }
  }
}

/** normaliseText (which returns most cells and runs, printable ASCII, unchanged at once). */
export const normalise = normaliseText;
