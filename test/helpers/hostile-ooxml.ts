// Hostile Office files built in the test: zips whose entries declare what they like (a hand-made
// central directory over precompressed data), a genuine 4 GB deflate stream in ~4 MB, and OLE
// compound files (the container of legacy .doc/.xls/.ppt and of encrypted packages).

import { constants, deflateRawSync } from 'node:zlib';
import { deflateSync } from 'fflate';

export interface RawEntry {
  name: string;
  /** The bytes stored: raw deflate (method 8) or as is (method 0). */
  data: Uint8Array;
  method?: 0 | 8;
  /** The uncompressed size the headers declare. */
  size: number;
  /** Declare the sizes in a zip64 extra field (0xffffffff in the 32-bit fields). */
  zip64?: boolean;
}

/** A deflated entry of this text, declaring its true size. */
export function deflatedEntry(name: string, text: string): RawEntry {
  const bytes = new TextEncoder().encode(text);
  return { name, data: deflateSync(bytes), size: bytes.length };
}

/** A zip of these entries exactly as given (no CRC: the readers do not check it). */
export function rawZip(entries: RawEntry[]): Uint8Array {
  const chunks: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = new TextEncoder().encode(entry.name);
    const local = new Uint8Array(30 + name.length);
    const view = new DataView(local.buffer);
    view.setUint32(0, 0x04034b50, true);
    view.setUint16(4, 20, true);
    view.setUint16(8, entry.method ?? 8, true);
    view.setUint32(18, entry.data.length, true);
    view.setUint32(22, entry.size % 2 ** 32, true);
    view.setUint16(26, name.length, true);
    local.set(name, 30);
    const extra = entry.zip64 ? new Uint8Array(20) : new Uint8Array(0);
    if (entry.zip64) {
      const extraView = new DataView(extra.buffer);
      extraView.setUint16(0, 1, true);
      extraView.setUint16(2, 16, true);
      extraView.setBigUint64(4, BigInt(entry.size), true);
      extraView.setBigUint64(12, BigInt(entry.data.length), true);
    }
    const header = new Uint8Array(46 + name.length + extra.length);
    const centralView = new DataView(header.buffer);
    centralView.setUint32(0, 0x02014b50, true);
    centralView.setUint16(4, 20, true);
    centralView.setUint16(6, 20, true);
    centralView.setUint16(10, entry.method ?? 8, true);
    centralView.setUint32(20, entry.zip64 ? 0xffffffff : entry.data.length, true);
    centralView.setUint32(24, entry.zip64 ? 0xffffffff : entry.size, true);
    centralView.setUint16(28, name.length, true);
    centralView.setUint16(30, extra.length, true);
    centralView.setUint32(42, offset, true);
    header.set(name, 46);
    header.set(extra, 46 + name.length);
    chunks.push(local, entry.data);
    central.push(header);
    offset += local.length + entry.data.length;
  }
  const directorySize = central.reduce((sum, header) => sum + header.length, 0);
  const end = new Uint8Array(22);
  const endView = new DataView(end.buffer);
  endView.setUint32(0, 0x06054b50, true);
  endView.setUint16(8, entries.length, true);
  endView.setUint16(10, entries.length, true);
  endView.setUint32(12, directorySize, true);
  endView.setUint32(16, offset, true);
  return concat([...chunks, ...central, end]);
}

export function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/**
 * A raw deflate stream that really inflates to `segments` × 64 MiB of zeros (64 segments: 4 GiB)
 * in about 64 KB a segment: one fully flushed segment (self-contained, not final) repeated, then
 * an empty final block.
 */
export function zeroBombStream(segments: number): Uint8Array {
  const segment = deflateRawSync(Buffer.alloc(64 * 1024 * 1024), { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  const finalEmptyBlock = new Uint8Array([0x03, 0x00]);
  return concat([...Array<Uint8Array>(segments).fill(segment), finalEmptyBlock]);
}

export const DOCX_CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`;
export const DOCX_PACKAGE_RELS = `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;

/** A .docx whose word/document.xml is the given entry (its other parts honest). */
export function docxAround(document: RawEntry | string): Uint8Array {
  return rawZip([
    deflatedEntry('[Content_Types].xml', DOCX_CONTENT_TYPES),
    deflatedEntry('_rels/.rels', DOCX_PACKAGE_RELS),
    typeof document === 'string' ? deflatedEntry('word/document.xml', document) : document,
  ]);
}

/**
 * A minimal OLE compound file (version 3, 512-byte sectors): the header, one FAT sector and one
 * directory sector holding the root entry and up to three streams of these names (no data).
 */
export function makeCfb(streamNames: string[]): Uint8Array {
  const bytes = new Uint8Array(512 * 3);
  const view = new DataView(bytes.buffer);
  bytes.set([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], 0);
  view.setUint16(24, 0x3e, true);
  view.setUint16(26, 3, true);
  view.setUint16(28, 0xfffe, true);
  view.setUint16(30, 9, true);
  view.setUint16(32, 6, true);
  view.setUint32(44, 1, true); // one FAT sector
  view.setUint32(48, 1, true); // the directory starts at sector 1
  view.setUint32(56, 4096, true);
  view.setUint32(60, 0xfffffffe, true);
  view.setUint32(68, 0xfffffffe, true);
  for (let k = 0; k < 109; k++) view.setUint32(76 + k * 4, k === 0 ? 0 : 0xffffffff, true);
  // Sector 0 (the FAT): itself, then the directory's one-sector chain.
  const fat = 512;
  for (let k = 0; k < 128; k++) view.setUint32(fat + k * 4, 0xffffffff, true);
  view.setUint32(fat, 0xfffffffd, true);
  view.setUint32(fat + 4, 0xfffffffe, true);
  // Sector 1 (the directory).
  ['Root Entry', ...streamNames.slice(0, 3)].forEach((name, k) => {
    const at = 1024 + k * 128;
    for (let c = 0; c < name.length; c++) view.setUint16(at + c * 2, name.charCodeAt(c), true);
    view.setUint16(at + 64, (name.length + 1) * 2, true);
    bytes[at + 66] = k === 0 ? 5 : 2;
  });
  return bytes;
}
