import {
  CopyObjectCommand,
  DeleteObjectsCommand,
  HeadObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { MultipartSink, PART_BYTES } from './multipart-sink.ts';

// Where a file's objects live in the bucket. Everything of a file is under a key that names the
// file, so deleting it is a few prefix deletions:
//   uploads/<userId>/<fileId>.pdf           the upload (presigned PUT)
//   work/<fileId>/<runId>/source.pdf        the downloaded PDF of a run
//   work/<fileId>/<runId>/part-<n>.json     chunks of one part (extract → embed)
//   work/<fileId>/<runId>/part-<n>.vec      that part's packed vectors (embed → completion)
//   vectors/<fileId>/<runId>.pvec           the completed file's packed vectors (retrieval)
//   vectors/<fileId>/<runId>.plex           with VECTOR_STORE=s3vectors: its lexical index alone
//                                           (the vectors are in S3 Vectors)
//   vectors/<fileId>/<runId>/text-pages-<b>.json  the texts and sizes of a block of pages (written
//                                           at ingestion; ocr-pages-<b>.json: the pages OCR read)
//   vectors/<fileId>/<runId>/page-<n>.json  a page's, for a page ingestion kept none of
//   vectors/<fileId>/<runId>/page-<n>.png   a page's image (drawn on its first request)
//   vectors/<fileId>/<runId>/source.pdf     the completed run's PDF, kept to draw pages from
//   exports/<userId>/<exportId>.zip         an account export (POST /me/export), expired after a day

/** The bucket's top-level prefixes: the stack grants each function its own (infra/deployment/) and expires uploads and work files. */
export const UPLOADS_PREFIX = 'uploads/';
export const WORK_PREFIX = 'work/';
export const VECTORS_PREFIX = 'vectors/';
export const EXPORTS_PREFIX = 'exports/';
export type BucketPrefix = typeof UPLOADS_PREFIX | typeof WORK_PREFIX | typeof VECTORS_PREFIX | typeof EXPORTS_PREFIX;

const pad = (n: number) => String(n).padStart(5, '0');
export const uploadKey = (userId: string, fileId: string) => `${UPLOADS_PREFIX}${userId}/${fileId}.pdf`;
/** Every upload of a user (what an erasure empties). */
export const userUploadsPrefix = (userId: string) => `${UPLOADS_PREFIX}${userId}/`;
/** Every account export of a user (what an erasure empties). */
export const userExportsPrefix = (userId: string) => `${EXPORTS_PREFIX}${userId}/`;
export const exportZipKey = (userId: string, exportId: string) => `${userExportsPrefix(userId)}${exportId}.zip`;
export const workPrefix = (fileId: string) => `${WORK_PREFIX}${fileId}/`;
export const runWorkPrefix = (fileId: string, runId: string) => `${workPrefix(fileId)}${runId}/`;
export const sourceKey = (fileId: string, runId: string) => `${runWorkPrefix(fileId, runId)}source.pdf`;
export const partKey = (fileId: string, runId: string, part: number) =>
  `${runWorkPrefix(fileId, runId)}part-${pad(part)}.json`;
export const partVectorsKey = (fileId: string, runId: string, part: number) =>
  `${runWorkPrefix(fileId, runId)}part-${pad(part)}.vec`;
/** What pdf-extract read in one range of a large document's pages (its chunks, its unusable pages). */
export const extractRangeKey = (fileId: string, runId: string, range: number) =>
  `${runWorkPrefix(fileId, runId)}extract-${pad(range)}.json`;
/** The text pdf-ocr recognised in one range of pages (a message's worth). */
export const ocrResultKey = (fileId: string, runId: string, range: number) =>
  `${runWorkPrefix(fileId, runId)}ocr-${pad(range)}.json`;
export const vectorsPrefix = (fileId: string) => `${VECTORS_PREFIX}${fileId}/`;
export const vectorsKey = (fileId: string, runId: string) => `${vectorsPrefix(fileId)}${runId}.pvec`;
/** A completed file's lexical index when its vectors are in S3 Vectors (vector-store.ts). */
export const lexicalKey = (fileId: string, runId: string) => `${vectorsPrefix(fileId)}${runId}.plex`;
/** Whether a record's vectorsKey names a lexical index only (its vectors are in S3 Vectors). */
export const isLexicalObject = (key: string) => key.endsWith('.plex');
/** What a run keeps beside its vectors for reading pages (deleted with the file, or when another run completes). */
export const keptRunPrefix = (fileId: string, runId: string) => `${vectorsPrefix(fileId)}${runId}/`;
export const pageTextKey = (fileId: string, runId: string, page: number) =>
  `${keptRunPrefix(fileId, runId)}page-${pad(page)}.json`;
/** Pages per page-text object. */
export const PAGES_PER_BLOCK = 32;
export const pageBlockOf = (page: number) => Math.floor((page - 1) / PAGES_PER_BLOCK);
export const pageBlockKey = (fileId: string, runId: string, block: number, source: 'text' | 'ocr') =>
  `${keptRunPrefix(fileId, runId)}${source}-pages-${pad(block)}.json`;
/** Whether a key names a block of page texts (pageBlockKey), text layer's or OCR's. */
export const namesPageBlock = (key: string) => /\/(text|ocr)-pages-\d+\.json$/.test(key);
export const pageImageKey = (fileId: string, runId: string, page: number) =>
  `${keptRunPrefix(fileId, runId)}page-${pad(page)}.png`;
/** Why a page could not be drawn, remembered so that it is not drawn again on every request. */
export const pageDrawFailureKey = (fileId: string, runId: string, page: number) =>
  `${keptRunPrefix(fileId, runId)}page-${pad(page)}.failed.json`;
/** The kept prefix of the run whose vectors these are (a superseded run's, from the record's old vectors key). */
export const keptPrefixOfVectors = (key: string) => key.replace(/\.(pvec|plex)$/, '/');
export const keptSourceKey = (fileId: string, runId: string) => `${keptRunPrefix(fileId, runId)}source.pdf`;

export class FileStorage {
  constructor(
    private readonly s3: S3Client,
    readonly bucket: string,
  ) {}

  async get(key: string): Promise<Uint8Array> {
    const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return out.Body!.transformToByteArray();
  }

  /**
   * Writes the object to a file at `path` as its bytes arrive (memory: the stream's buffers, not
   * the object). Throws as `get` does (NoSuchKey).
   */
  async toFile(key: string, path: string): Promise<void> {
    const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    await pipeline(out.Body as Readable, createWriteStream(path, { flags: 'wx' }));
  }

  /** The object's bytes as they arrive, or undefined when there is no such object. */
  async stream(key: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return out.Body as AsyncIterable<Uint8Array>;
    } catch (err) {
      if ((err as { name?: string }).name === 'NoSuchKey') return undefined;
      throw err;
    }
  }

  /** The object's bytes, or undefined when there is no such object. */
  async getIfExists(key: string): Promise<Uint8Array | undefined> {
    try {
      return await this.get(key);
    } catch (err) {
      if ((err as { name?: string }).name === 'NoSuchKey') return undefined;
      throw err;
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (name === 'NotFound' || name === 'NoSuchKey') return false;
      throw err;
    }
  }

  /** Copies an object inside the bucket (no bytes through this process). */
  async copy(from: string, to: string): Promise<void> {
    await this.s3.send(
      new CopyObjectCommand({ Bucket: this.bucket, CopySource: `${this.bucket}/${encodeURIComponent(from)}`, Key: to }),
    );
  }

  async put(key: string, body: Uint8Array | string, contentType: string): Promise<void> {
    await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType }));
  }

  /**
   * Stores bytes that may be large (a downloaded PDF, up to PDF_MAX_BYTES) in parts of
   * multipart-sink.ts: no request carries more than a part (the local S3 refuses bodies over
   * 11 MiB, and a part that fails is sent again alone). Bytes given as they arrive are taken one
   * part at a time, so memory holds a part or two whatever the size (docs/DECISIONS.md, Large
   * PDFs: nothing holds the whole file); an object of one part or less is one plain PUT. A failed
   * upload is aborted, leaving no parts.
   */
  async putLarge(key: string, body: Uint8Array | AsyncIterable<Uint8Array>, contentType: string): Promise<void> {
    if (body instanceof Uint8Array && body.byteLength <= PART_BYTES) return this.put(key, body, contentType);
    const chunks = body instanceof Uint8Array ? slices(body, PART_BYTES) : body;
    let first: Buffer[] = [];
    let firstBytes = 0;
    let sink: MultipartSink | undefined;
    try {
      for await (const chunk of chunks) {
        const piece = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        if (sink) {
          await sink.write(piece);
          continue;
        }
        first.push(piece);
        firstBytes += piece.byteLength;
        if (firstBytes <= PART_BYTES) continue;
        // More than one part: a multipart upload, starting with what was kept.
        sink = new MultipartSink(this.s3, { bucket: this.bucket, key, contentType });
        const kept = first;
        first = [];
        for (const p of kept) await sink.write(p);
      }
      if (!sink) return await this.put(key, Buffer.concat(first, firstBytes), contentType);
      await sink.complete();
    } catch (err) {
      await sink?.abort();
      throw err;
    }
  }

  async deleteKeys(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      if (!batch.length) continue;
      await this.s3.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      );
    }
  }

  /** The keys under a prefix. */
  async listKeys(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const out = await this.s3.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of out.Contents ?? []) if (o.Key) keys.push(o.Key);
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
    return keys;
  }

  /** Deletes every object under a prefix; how many. */
  async deletePrefix(prefix: string): Promise<number> {
    let deleted = 0;
    let token: string | undefined;
    do {
      const out = await this.s3.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      const keys = (out.Contents ?? []).map((o) => o.Key!).filter(Boolean);
      await this.deleteKeys(keys);
      deleted += keys.length;
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
    return deleted;
  }
}

/** A buffer's bytes in views of at most `size` (no copy). */
function* slices(body: Uint8Array, size: number): Generator<Uint8Array, void, undefined> {
  for (let at = 0; at < body.byteLength; at += size) yield body.subarray(at, Math.min(at + size, body.byteLength));
}
