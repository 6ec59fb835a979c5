import { GreedyPacker, packBatches } from '../batches.ts';
import type { Chunk } from '../files/chunk-repository.ts';

// Fan-out: consecutive chunks grouped into parts, each filled up to what one embedding request
// may carry (inputs and tokens), so a file costs the fewest requests the provider's limits allow
// and its parts are embedded in parallel. A chunk's cost is the larger of its exact token count
// and the provider's own estimate, so the provider never has to split a part in two.

export interface PartLimits {
  maxInputs: number;
  maxTokens: number;
}

export class PartPlanner {
  private readonly packer: GreedyPacker<Chunk>;
  private count: number;

  constructor(
    limits: PartLimits,
    costOf: (chunk: Chunk) => number,
    private readonly onPart: (part: number, chunks: Chunk[]) => void,
    /** Number of the first part (OCR parts are numbered after the text layer's). */
    private readonly firstPart = 0,
  ) {
    this.packer = new GreedyPacker({ maxItems: limits.maxInputs, maxWeight: limits.maxTokens }, costOf);
    this.count = firstPart;
  }

  add(chunk: Chunk): void {
    this.emit(this.packer.add(chunk));
  }

  /** Emits the last, partly filled part. */
  flush(): void {
    this.emit(this.packer.flush());
  }

  private emit(part: Chunk[] | undefined): void {
    if (part) this.onPart(this.count++, part);
  }

  /** Parts emitted so far (by this planner). */
  get parts(): number {
    return this.count - this.firstPart;
  }
}

/**
 * Limits that split a run known in advance (its chunks' weights, in order) into parts of about
 * equal size instead of full parts and a small remainder: a provider's time grows with a request's
 * tokens, and the run waits for its largest part. Only the binding limit is evened out (each part
 * but the last still closes at or above the run's share of it). Packing is greedy, so evened limits can
 * cut a run into more parts than the plain ones where the other limit also closes parts: both are
 * packed here, and the evened limits are kept only when they make no more parts and no larger
 * largest part than the plain limits.
 */
export function balancedLimits(limits: PartLimits, weights: readonly number[]): PartLimits {
  const total = weights.reduce((a, b) => a + b, 0);
  const byTokens = Math.ceil(total / limits.maxTokens);
  const byInputs = Math.ceil(weights.length / limits.maxInputs);
  const parts = Math.max(byTokens, byInputs);
  if (parts <= 1) return limits;
  const maxChunkWeight = weights.reduce((a, b) => Math.max(a, b), 0);
  const evened =
    byTokens >= byInputs
      ? { ...limits, maxTokens: Math.min(limits.maxTokens, Math.ceil(total / parts) + maxChunkWeight) }
      : { ...limits, maxInputs: Math.min(limits.maxInputs, Math.ceil(weights.length / parts)) };
  const plain = packed(limits, weights);
  const even = packed(evened, weights);
  const fits =
    even.parts <= plain.parts && even.largestWeight <= plain.largestWeight && even.largestInputs <= plain.largestInputs;
  return fits ? evened : limits;
}

/** The parts greedy packing makes of these weights within `limits`: how many, and the largest. */
function packed(limits: PartLimits, weights: readonly number[]) {
  const batches = packBatches(weights, { maxItems: limits.maxInputs, maxWeight: limits.maxTokens }, (w) => w);
  return {
    parts: batches.length,
    largestWeight: Math.max(...batches.map((b) => b.reduce((a, w) => a + w, 0))),
    largestInputs: Math.max(...batches.map((b) => b.length)),
  };
}
