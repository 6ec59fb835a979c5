import { isoNow } from '../../clock.ts';
import { asError } from '../../errors.ts';
import { logger } from '../../observability/logger.ts';
import type { SendMessageDeps } from './reply-request.ts';

/** How often the growing text is written (at most; nothing is written while nothing is new). */
const FLUSH_MS = 500;

/**
 * Stores a streamed reply as it grows, at most every FLUSH_MS whatever the number of deltas, so
 * a long reply costs writes in proportion to its duration, not its tokens; a reader (a resume,
 * the list of messages) is at most FLUSH_MS behind the generator, and a generator that dies loses
 * at most that much. Between writes it reads the status, so a stop requested anywhere is seen
 * within FLUSH_MS: `stopped` fires (also when the reply is gone with its chat). A write goes out
 * at least every heartbeat, so readers can tell a live generator from a dead one.
 */
export class ReplyRecorder {
  text = '';
  readonly deltaEnds: number[] = [];
  private readonly stop = new AbortController();
  private written = 0;
  private lastWrite = Date.now();
  private running: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly deps: SendMessageDeps,
    private readonly chatId: string,
    private readonly sequenceNumber: number,
  ) {
    this.timer = setInterval(() => {
      this.running ??= this.tick().finally(() => (this.running = undefined));
    }, FLUSH_MS);
  }

  get stopped(): AbortSignal {
    return this.stop.signal;
  }

  add(text: string): void {
    this.text += text;
    this.deltaEnds.push(this.text.length);
  }

  private async tick(): Promise<void> {
    if (this.stop.signal.aborted) return;
    const { replies, clock, settings } = this.deps;
    try {
      const heartbeatDue = Date.now() - this.lastWrite >= settings.replyHeartbeatMs;
      if (this.deltaEnds.length > this.written || heartbeatDue) {
        const count = this.deltaEnds.length;
        const now = isoNow(clock);
        const applied = await replies.progress(this.chatId, this.sequenceNumber, {
          text: this.text.slice(0, this.deltaEnds[count - 1] ?? 0),
          deltaEnds: this.deltaEnds.slice(0, count),
          now,
        });
        if (!applied) return this.stop.abort();
        this.written = count;
        this.lastWrite = Date.now();
      } else if ((await replies.statusAt(this.chatId, this.sequenceNumber)) !== 'streaming') {
        this.stop.abort();
      }
    } catch (err) {
      logger.warn('could not store the reply so far', { message: asError(err).message });
    }
  }

  /** Stops writing; resolves once a write under way is done. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
