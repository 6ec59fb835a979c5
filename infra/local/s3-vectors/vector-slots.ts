// An index's vectors as the stand-in holds them (s3-vectors.ts), and its buckets and indexes.

export type Metadata = Record<string, unknown>;

export interface StoredVector {
  data: Float32Array;
  metadata?: Metadata;
}

/** Vectors per block of an index's storage. */
const BLOCK_VECTORS = 256;

/**
 * An index's vectors in compact storage: the float32 values in blocks of BLOCK_VECTORS vectors
 * (a library of a million 1,536-dimension vectors is 6 GB of values; one object and one buffer
 * per vector would add hundreds of MB and scatter them), each vector's norm beside it (a cosine
 * query does not compute it again), the keys and metadata apart by slot. A deleted vector's slot
 * is reused. Iteration follows the keys' insertion order, as a Map's does.
 */
export class VectorSlots {
  private readonly blocks: Float32Array[] = [];
  private norms = new Float64Array(BLOCK_VECTORS);
  private readonly metadataOf: (Metadata | undefined)[] = [];
  private readonly slotOf = new Map<string, number>();
  private readonly freeSlots: number[] = [];

  constructor(readonly dimension: number) {}

  get size(): number {
    return this.slotOf.size;
  }

  keys(): IterableIterator<string> {
    return this.slotOf.keys();
  }

  has(key: string): boolean {
    return this.slotOf.has(key);
  }

  set(key: string, data: Float32Array, metadata: Metadata | undefined): void {
    let slot = this.slotOf.get(key);
    if (slot === undefined) {
      slot = this.freeSlots.pop() ?? this.metadataOf.length;
      this.slotOf.set(key, slot);
    }
    const block = Math.floor(slot / BLOCK_VECTORS);
    while (this.blocks.length <= block) this.blocks.push(new Float32Array(BLOCK_VECTORS * this.dimension));
    if (this.norms.length <= slot) {
      const grown = new Float64Array(this.norms.length * 2);
      grown.set(this.norms);
      this.norms = grown;
    }
    this.blocks[block]!.set(data, (slot % BLOCK_VECTORS) * this.dimension);
    let squares = 0;
    for (let i = 0; i < data.length; i++) squares += data[i]! * data[i]!;
    this.norms[slot] = Math.sqrt(squares);
    this.metadataOf[slot] = metadata;
  }

  delete(key: string): void {
    const slot = this.slotOf.get(key);
    if (slot === undefined) return;
    this.slotOf.delete(key);
    this.metadataOf[slot] = undefined;
    this.freeSlots.push(slot);
  }

  get(key: string): StoredVector | undefined {
    const slot = this.slotOf.get(key);
    return slot === undefined ? undefined : this.at(slot);
  }

  /**
   * Visits every vector in insertion order: its key, the block holding its values and their
   * offset there, its norm and metadata (no object made per vector: a query scans them all).
   */
  scan(
    visit: (key: string, block: Float32Array, offset: number, norm: number, metadata: Metadata | undefined) => void,
  ) {
    for (const [key, slot] of this.slotOf)
      visit(
        key,
        this.blocks[Math.floor(slot / BLOCK_VECTORS)]!,
        (slot % BLOCK_VECTORS) * this.dimension,
        this.norms[slot]!,
        this.metadataOf[slot],
      );
  }

  private at(slot: number): StoredVector {
    const offset = (slot % BLOCK_VECTORS) * this.dimension;
    return {
      data: this.blocks[Math.floor(slot / BLOCK_VECTORS)]!.subarray(offset, offset + this.dimension),
      metadata: this.metadataOf[slot],
    };
  }
}

export interface VectorIndex {
  name: string;
  dimension: number;
  distanceMetric: 'cosine' | 'euclidean';
  nonFilterable: string[];
  creationTime: number;
  vectors: VectorSlots;
}

export interface VectorBucket {
  name: string;
  creationTime: number;
  indexes: Map<string, VectorIndex>;
}
