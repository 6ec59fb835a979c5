import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createDeflateRaw, crc32 } from 'node:zlib';

// A streaming ZIP writer (docs/DECISIONS.md "Account export"): each entry is a local header, its
// data deflated as it arrives, then a data descriptor (CRC and sizes are known only after the
// data); the central directory follows the last entry. What it holds is one deflate window and
// the directory's small records, never an entry or the archive. No ZIP64: an archive stays under
// 4 GB and 65,535 entries, and writing past either is refused rather than corrupted.

/** Where the archive's bytes go, in order; the writer waits for each write. */
export type ZipSink = (chunk: Buffer) => Promise<void>;

interface CentralRecord {
  name: Buffer;
  crc: number;
  compressedSize: number;
  size: number;
  offset: number;
}

const UINT32_LIMIT = 0xffffffff;
const MAX_ENTRIES = 0xffff;
/** Bit 3: sizes and CRC in a data descriptor; bit 11: the name is UTF-8. */
const FLAGS = 0x0808;
const DEFLATE = 8;
const VERSION = 20;
/** 1980-01-01 00:00 in DOS time: entries carry no meaningful modification time. */
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;

/** Flags, method, time and date: the fields a local header and its central record share, in this order. */
function writeEntryFields(record: Buffer, at: number): void {
  record.writeUInt16LE(FLAGS, at);
  record.writeUInt16LE(DEFLATE, at + 2);
  record.writeUInt16LE(DOS_TIME, at + 4);
  record.writeUInt16LE(DOS_DATE, at + 6);
}

const toBuffer = (chunk: Uint8Array | string) =>
  typeof chunk === 'string'
    ? Buffer.from(chunk, 'utf8')
    : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);

export class ZipWriter {
  private offset = 0;
  private readonly entries: CentralRecord[] = [];

  constructor(private readonly sink: ZipSink) {}

  private async write(chunk: Buffer): Promise<void> {
    this.offset += chunk.byteLength;
    if (this.offset > UINT32_LIMIT) throw new Error('The archive would exceed 4 GB (no ZIP64)');
    await this.sink(chunk);
  }

  /** Adds an entry whose data arrives in pieces (text is written as UTF-8). */
  async add(fileName: string, data: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>): Promise<void> {
    if (this.entries.length >= MAX_ENTRIES) throw new Error('The archive would exceed 65,535 entries (no ZIP64)');
    const name = Buffer.from(fileName, 'utf8');
    const offset = this.offset;
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(VERSION, 4);
    writeEntryFields(header, 6);
    // CRC and sizes (14..25) stay 0: the data descriptor carries them.
    header.writeUInt16LE(name.byteLength, 26);
    header.writeUInt16LE(0, 28);
    await this.write(Buffer.concat([header, name]));

    let crc = 0;
    let size = 0;
    let compressedSize = 0;
    async function* measured() {
      for await (const piece of data) {
        const chunk = toBuffer(piece);
        crc = crc32(chunk, crc);
        size += chunk.byteLength;
        yield chunk;
      }
    }
    await pipeline(Readable.from(measured()), createDeflateRaw(), async (deflated: AsyncIterable<Buffer>) => {
      for await (const chunk of deflated) {
        compressedSize += chunk.byteLength;
        await this.write(chunk);
      }
    });
    if (size > UINT32_LIMIT) throw new Error('An entry would exceed 4 GB (no ZIP64)');

    const descriptor = Buffer.alloc(16);
    descriptor.writeUInt32LE(0x08074b50, 0);
    descriptor.writeUInt32LE(crc >>> 0, 4);
    descriptor.writeUInt32LE(compressedSize, 8);
    descriptor.writeUInt32LE(size, 12);
    await this.write(descriptor);
    this.entries.push({ name, crc: crc >>> 0, compressedSize, size, offset });
  }

  /** Writes the central directory and its end record: the archive is complete. */
  async finish(): Promise<void> {
    const start = this.offset;
    for (const e of this.entries) {
      const record = Buffer.alloc(46);
      record.writeUInt32LE(0x02014b50, 0);
      record.writeUInt16LE(VERSION, 4);
      record.writeUInt16LE(VERSION, 6);
      writeEntryFields(record, 8);
      record.writeUInt32LE(e.crc, 16);
      record.writeUInt32LE(e.compressedSize, 20);
      record.writeUInt32LE(e.size, 24);
      record.writeUInt16LE(e.name.byteLength, 28);
      // Extra and comment lengths, disk number, internal and external attributes: 0.
      record.writeUInt32LE(e.offset, 42);
      await this.write(Buffer.concat([record, e.name]));
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(this.entries.length, 8);
    end.writeUInt16LE(this.entries.length, 10);
    end.writeUInt32LE(this.offset - start, 12);
    end.writeUInt32LE(start, 16);
    await this.write(end);
  }
}
