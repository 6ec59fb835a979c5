import { GreedyPacker } from '../batches.ts';
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
 * Limits that split a run known in advance (`total`) into the same number of parts as `limits`
 * would, of about equal size, instead of full parts and a small remainder: a provider's time
 * grows with a request's tokens, and the run waits for its largest part. Only the binding limit
 * is evened out; each part but the last still closes above the run's share of it.
 */
export function balancedLimits(
  limits: PartLimits,
  total: { chunks: number; weight: number; maxChunkWeight: number },
): PartLimits {
  const byTokens = Math.ceil(total.weight / limits.maxTokens);
  const byInputs = Math.ceil(total.chunks / limits.maxInputs);
  const parts = Math.max(byTokens, byInputs);
  if (parts <= 1) return limits;
  return byTokens >= byInputs
    ? { ...limits, maxTokens: Math.min(limits.maxTokens, Math.ceil(total.weight / parts) + total.maxChunkWeight) }
    : { ...limits, maxInputs: Math.min(limits.maxInputs, Math.ceil(total.chunks / parts) + 1) };
}
