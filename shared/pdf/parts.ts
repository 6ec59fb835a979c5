import type { Chunk } from './chunker.ts';

// Fan-out: consecutive chunks grouped into parts, each filled up to what one embedding request
// may carry (inputs and tokens), so a file costs the fewest requests the provider's limits allow
// and its parts are embedded in parallel. A chunk's cost is the larger of its exact token count
// and the provider's own estimate, so the provider never has to split a part in two.

export interface PartLimits {
  maxInputs: number;
  maxTokens: number;
}

export class PartPlanner {
  private current: Chunk[] = [];
  private tokens = 0;
  private count: number;

  constructor(
    private readonly limits: PartLimits,
    private readonly costOf: (chunk: Chunk) => number,
    private readonly onPart: (part: number, chunks: Chunk[]) => void,
    /** Number of the first part (OCR parts are numbered after the text layer's). */
    private readonly firstPart = 0,
  ) {
    this.count = firstPart;
  }

  add(chunk: Chunk): void {
    const cost = this.costOf(chunk);
    if (this.current.length && (this.current.length >= this.limits.maxInputs || this.tokens + cost > this.limits.maxTokens)) this.flush();
    this.current.push(chunk);
    this.tokens += cost;
  }

  /** Emits the last, partly filled part. */
  flush(): void {
    if (!this.current.length) return;
    this.onPart(this.count++, this.current);
    this.current = [];
    this.tokens = 0;
  }

  /** Parts emitted so far (by this planner). */
  get parts(): number {
    return this.count - this.firstPart;
  }
}
