import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { PartLocation } from '../readers/reader.ts';
import { batchGetAll, batchWriteAll, deleteAll, queryPages, Repository, type Item } from '../dynamo.ts';

// Chunks of a file (docs/ARCHITECTURE.md, Access patterns): FILE#<fileId> / CHUNK#<n, 6 digits>,
// with the text, its pages, its token count, the run that wrote it and the embedding as a float32
// Binary. The key is a function of the chunk's number only, so writing a chunk again (a redelivered
// message) replaces it instead of adding one; a re-ingestion overwrites chunk n and deletes any
// beyond its count.

/** A passage of a file as the chunker cuts it and this repository stores it. */
export interface Chunk {
  /** 0-based position in the file. */
  index: number;
  text: string;
  /** First and last page (1-based) the text comes from. */
  page: number;
  pageEnd: number;
  /** `[offset in text, page]` for every page the chunk covers, offsets ascending. */
  pageStarts: [number, number][];
  /** Tokens in `text` (cl100k_base). */
  tokens: number;
  /** Pages of the chunk whose text was recognised by OCR (absent: none). */
  ocrPages?: number[];
  /** The heading path the chunk sits under ("2 Methods > 2.1 Data"; absent: none found). */
  section?: string;
  /** `[offset in text, section]` where the chunk runs over several sections (absent: one or none). */
  sectionStarts?: [number, string][];
  /**
   * `[offset in text, length, page, offset in the page's text]` for each stretch of the chunk that
   * is a verbatim stretch of one page's text (absent: chunked before positions were kept).
   */
  runs?: [number, number, number, number][];
  /** Where those stretches are drawn: flat `[page, start, end, x, y, width, height]` (shared/pdf/positions.ts). */
  spans?: number[];
  /**
   * A document of another format than PDF: where each part the chunk covers sits (`page` is then
   * the part's number). Absent for a PDF's pages.
   */
  places?: ChunkPlace[];
}

/** A part's place in its document, as a chunk carries it. */
export interface ChunkPlace {
  part: number;
  location: PartLocation;
  /** A sheet's part: `[offset in the part's text, sheet row]` where each row's line starts. */
  rowStarts?: [number, number][];
  /** A sheet's part: its first and last column letters. */
  columns?: [string, string];
}

const CHUNK_DIGITS = 6;

/** A stored chunk: the chunker's chunk (its index as `n`), the run that wrote it and its embedding. */
export interface ChunkItem extends Omit<Chunk, 'index'> {
  fileId: string;
  runId: string;
  n: number;
  /** float32, little-endian. */
  embedding: Uint8Array;
}

const chunkPk = (fileId: string) => `FILE#${fileId}`;
const chunkSk = (n: number) => `CHUNK#${String(n).padStart(CHUNK_DIGITS, '0')}`;
const chunkKey = (fileId: string, n: number) => ({ PK: chunkPk(fileId), SK: chunkSk(n) });

// Spans are many small integers: stored as one Binary (int32, little-endian), a quarter of a list of numbers' size.
const spansToBinary = (spans: number[]) => new Uint8Array(Int32Array.from(spans).buffer);
const spansFromBinary = (bytes: Uint8Array) => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: bytes.byteLength >> 2 }, (_, i) => view.getInt32(i * 4, true));
};

function toItem({ spans, ...c }: ChunkItem): Item {
  const item: Item = { ...chunkKey(c.fileId, c.n), ...c };
  if (spans?.length) item.spans = spansToBinary(spans);
  return item;
}

function fromItem(item: Item): ChunkItem {
  const {
    fileId,
    runId,
    n,
    text,
    page,
    pageEnd,
    pageStarts,
    tokens,
    ocrPages,
    section,
    sectionStarts,
    runs,
    places,
    embedding,
  } = item as unknown as ChunkItem;
  const chunk: ChunkItem = { fileId, runId, n, text, page, pageEnd, pageStarts, tokens, embedding };
  if (ocrPages) chunk.ocrPages = ocrPages;
  if (section !== undefined) chunk.section = section;
  if (sectionStarts) chunk.sectionStarts = sectionStarts;
  if (runs) chunk.runs = runs;
  if (places) chunk.places = places;
  if (item.spans instanceof Uint8Array) chunk.spans = spansFromBinary(item.spans);
  return chunk;
}

export class ChunkRepository extends Repository {
  constructor(
    db: DynamoDBDocumentClient,
    table: string,
    private readonly concurrency = 8,
  ) {
    super(db, table);
  }

  async putMany(chunks: ChunkItem[]): Promise<void> {
    await batchWriteAll(
      this.db,
      this.table,
      chunks.map((c) => ({ PutRequest: { Item: toItem(c) } })),
      this.concurrency,
    );
  }

  /** The chunks of a file with these numbers (missing ones left out). */
  async getMany(fileId: string, ns: number[]): Promise<ChunkItem[]> {
    return this.getByKeys(ns.map((n) => ({ fileId, n })));
  }

  async getByKeys(keys: { fileId: string; n: number }[]): Promise<ChunkItem[]> {
    const items = await batchGetAll(
      this.db,
      this.table,
      keys.map((k) => chunkKey(k.fileId, k.n)),
    );
    return items.map(fromItem);
  }

  /** Every chunk of a file, page by page of the query (for copying a file's embeddings). */
  async *list(fileId: string): AsyncGenerator<ChunkItem[]> {
    const pages = queryPages(this.db, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :chunk)',
      ExpressionAttributeValues: { ':pk': chunkPk(fileId), ':chunk': 'CHUNK#' },
    });
    for await (const items of pages) yield items.map(fromItem);
  }

  /** Deletes the file's chunks numbered `from` and up (all of them by default); how many. */
  deleteFrom(fileId: string, from = 0): Promise<number> {
    return deleteAll(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': chunkPk(fileId), ':from': chunkSk(from), ':to': 'CHUNK#~' },
      },
      { concurrency: this.concurrency },
    );
  }
}
