// Greedy packing, the one way the codebase groups items under a request's limits (embedding
// requests, pipeline parts): items in order, a batch closed when the next item would take it over
// `maxItems` or `maxWeight`. An item heavier than `maxWeight` on its own still gets a batch.

interface PackLimits {
  maxItems: number;
  maxWeight: number;
}

/** Packs items as they come: `add` hands back the batch the new item closed, `flush` the last one. */
export class GreedyPacker<T> {
  private batch: T[] = [];
  private weight = 0;

  constructor(
    private readonly limits: PackLimits,
    private readonly weightOf: (item: T) => number,
  ) {}

  add(item: T): T[] | undefined {
    const w = this.weightOf(item);
    let closed: T[] | undefined;
    if (this.batch.length && (this.batch.length >= this.limits.maxItems || this.weight + w > this.limits.maxWeight))
      closed = this.flush();
    this.batch.push(item);
    this.weight += w;
    return closed;
  }

  flush(): T[] | undefined {
    if (!this.batch.length) return undefined;
    const closed = this.batch;
    this.batch = [];
    this.weight = 0;
    return closed;
  }
}

/** Every batch of `items`, packed greedily. */
export function packBatches<T>(items: Iterable<T>, limits: PackLimits, weightOf: (item: T) => number): T[][] {
  const packer = new GreedyPacker(limits, weightOf);
  const out: T[][] = [];
  for (const item of items) {
    const closed = packer.add(item);
    if (closed) out.push(closed);
  }
  const last = packer.flush();
  if (last) out.push(last);
  return out;
}
