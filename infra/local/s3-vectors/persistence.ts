import {
  closeSync,
  createReadStream,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { LIMITS } from './limits.ts';
import { VectorSlots, type Metadata, type VectorBucket, type VectorIndex } from './vector-slots.ts';

// What the stand-in keeps in its dataDir (npm start): each index's settings, and a log of its
// vectors appended by each request and compacted when the stand-in starts.

export const settingsFile = (dir: string, bucket: string, index: string) => join(dir, bucket, `${index}.json`);
export const logFile = (dir: string, bucket: string, index: string) => join(dir, bucket, `${index}.log`);

const base64Of = (data: Float32Array) => Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
function float32FromBase64(data: string): Float32Array {
  const bytes = Buffer.from(data, 'base64');
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}
export const putRecord = (key: string, data: Float32Array, metadata: Metadata | undefined) =>
  `${JSON.stringify(['put', key, base64Of(data), metadata ?? null])}\n`;
export const deleteRecord = (key: string) => `${JSON.stringify(['delete', key])}\n`;

export function writeSettings(dir: string, bucket: string, index: VectorIndex) {
  const file = settingsFile(dir, bucket, index.name);
  const { name, dimension, distanceMetric, nonFilterable, creationTime } = index;
  writeFileSync(`${file}.tmp`, JSON.stringify({ name, dimension, distanceMetric, nonFilterable, creationTime }));
  renameSync(`${file}.tmp`, file);
}

/** Rewrites an index's log with one line per vector it holds, a batch of lines per write. */
function compactLog(dir: string, bucket: string, index: VectorIndex) {
  const file = logFile(dir, bucket, index.name);
  const fd = openSync(`${file}.tmp`, 'w');
  try {
    let lines: string[] = [];
    for (const key of index.vectors.keys()) {
      const v = index.vectors.get(key)!;
      lines.push(putRecord(key, v.data, v.metadata));
      if (lines.length === LIMITS.maxPut) {
        writeSync(fd, lines.join(''));
        lines = [];
      }
    }
    if (lines.length) writeSync(fd, lines.join(''));
  } finally {
    closeSync(fd);
  }
  renameSync(`${file}.tmp`, file);
}

/** The buckets and indexes kept in dir, each index's log replayed line by line. */
export async function loadBuckets(dir: string): Promise<VectorBucket[]> {
  const buckets: VectorBucket[] = [];
  for (const name of readdirSync(dir)) {
    const bucket: VectorBucket = { name, creationTime: Date.now(), indexes: new Map() };
    for (const file of readdirSync(join(dir, name)).filter((f) => f.endsWith('.json'))) {
      const saved = JSON.parse(readFileSync(join(dir, name, file), 'utf8'));
      const index: VectorIndex = {
        name: saved.name,
        dimension: saved.dimension,
        distanceMetric: saved.distanceMetric,
        nonFilterable: saved.nonFilterable,
        creationTime: saved.creationTime,
        vectors: new VectorSlots(saved.dimension),
      };
      // The earlier format held the vectors in the settings file: read them, then rewrite.
      const earlier = Array.isArray(saved.vectors);
      let records = 0;
      let damaged = false;
      if (earlier)
        for (const [key, data, metadata] of saved.vectors as [string, string, Metadata | null][]) {
          index.vectors.set(key, float32FromBase64(data), metadata ?? undefined);
          records++;
        }
      const log = logFile(dir, name, index.name);
      if (existsSync(log))
        for await (const line of createInterface({
          input: createReadStream(log),
          crlfDelay: Number.POSITIVE_INFINITY,
        })) {
          if (!line) continue;
          let record: ['put', string, string, Metadata | null] | ['delete', string];
          try {
            record = JSON.parse(line);
          } catch {
            damaged = true; // a line cut short when the process stopped mid-write
            continue;
          }
          records++;
          if (record[0] === 'put') index.vectors.set(record[1], float32FromBase64(record[2]), record[3] ?? undefined);
          else index.vectors.delete(record[1]);
        }
      if (earlier) writeSettings(dir, name, index);
      if (earlier || damaged || records > index.vectors.size) compactLog(dir, name, index);
      bucket.indexes.set(index.name, index);
    }
    buckets.push(bucket);
  }
  return buckets;
}
