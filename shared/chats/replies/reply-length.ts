// How much of what a model sends a reply keeps. The request asks for at most REPLY_MAX_TOKENS,
// but a model (or a proxy in front of one) may ignore it, and the reply is stored in one table
// item (400 KB at most). So the text is cut where it could no longer be a reply of that many
// tokens (MAX_CHARS_PER_TOKEN characters each: no tokenizer's tokens average that much on real
// text) or where the stored item would outgrow the table, whichever comes first; a streamed reply
// is then ended as complete and the model's request closed (docs/DECISIONS.md, "Reply length").

/** No tokenizer's tokens average this many characters on real text. */
const MAX_CHARS_PER_TOKEN = 16;
/** The reply's share of its table item: its text in UTF-8 and its delta offsets. */
export const MAX_STORED_REPLY_BYTES = 300_000;
/** What one delta offset costs in the item at most (a number in a list). */
const BYTES_PER_DELTA = 8;

export class ReplyLength {
  private readonly maxChars: number;
  private chars = 0;
  private bytes = 0;
  private cut = false;

  constructor(maxTokens: number) {
    this.maxChars = maxTokens * MAX_CHARS_PER_TOKEN;
  }

  /** True once the reply has reached its length: nothing more is kept. */
  get full(): boolean {
    return this.cut;
  }

  /** The part of `text` (a delta, or a whole reply) the reply keeps. */
  take(text: string): string {
    if (this.cut) return '';
    const byteRoom = MAX_STORED_REPLY_BYTES - this.bytes - BYTES_PER_DELTA;
    let kept = text.slice(0, Math.max(0, this.maxChars - this.chars));
    let bytes = Buffer.byteLength(kept);
    // Characters take 1 to 3 bytes in UTF-8: cut in proportion until the bytes fit.
    while (bytes > byteRoom && kept) {
      kept = kept.slice(0, Math.floor(kept.length * (Math.max(0, byteRoom) / bytes)));
      bytes = Buffer.byteLength(kept);
    }
    if (/[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1); // never half a surrogate pair
    if (kept.length < text.length) this.cut = true;
    this.chars += kept.length;
    this.bytes += Buffer.byteLength(kept) + BYTES_PER_DELTA;
    return kept;
  }
}
