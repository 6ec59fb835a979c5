import '../config/limits.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { LimitExceededError } from '../errors.ts';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UsageCounters } from './usage-counters.ts';
import { InFlightSlots, type HeldSlot } from './in-flight-slots.ts';
import { Credits } from './credits.ts';

// The per-user limit policy (docs/DECISIONS.md "Per-user limits"), on the shared counters:
// - requests per minute on the expensive routes (the manifest's `rateLimit`), a fixed window per
//   UTC minute: one conditional ADD per request;
// - a daily token budget (UTC day) for model replies and embeddings. A reply reserves its
//   prompt's estimate plus the longest reply before the model is called (refused: LimitExceededError, nothing
//   stored) and settles to the provider's real usage afterwards; an ingestion is admitted while
//   the budget is not spent, and its embedding tokens are charged as each request is answered.
// - a number of ingestions and of replies in flight per user, and of streams following replies
//   (per user, and per reply): a slot (in-flight-slots.ts) taken before any slow work and released
//   however the work ends, or when its lease runs out.
// - credits bought with orders (credits.ts): a pool a reply or an embedding draws from once the
//   day's budget is spent (docs/DECISIONS.md "Credits").
// Over a limit: LimitExceededError with the seconds until it renews (the end of the minute, or of
// the UTC day). 0 turns a limit off.

/** `sharedReads` is counted per source IP (the public GET /shared/{shareId}), the others per user. */
export type RateLimitName = 'messages' | 'ingestions' | 'uploads' | 'pages' | 'sharedReads' | 'follows';

/**
 * Work of which one user may have only so much in flight at once: `follows` counts the streams
 * following any reply, `followers` those of one reply (taken with the reply's id as `of`).
 */
export type InFlightKind = 'ingestions' | 'replies' | 'follows' | 'followers';

interface LimitSettings {
  perMinute: Record<RateLimitName, number>;
  /** Requests allowed at once (the window's allowance); the rate's own per minute when absent. */
  burst: Partial<Record<RateLimitName, number>>;
  dailyTokens: number;
  inFlight: Record<InFlightKind, number>;
}

/** A burst of PDFs up to the queue's size plus those in flight is accepted (0: no queue, no burst). */
const pdfBurst = (config: Config) =>
  config.PDF_MAX_QUEUED_PER_USER ? config.PDF_MAX_QUEUED_PER_USER + config.PDF_MAX_IN_FLIGHT_PER_USER : undefined;

const limitSettings = (config: Config): LimitSettings => ({
  burst: { ingestions: pdfBurst(config), uploads: pdfBurst(config) },
  perMinute: {
    messages: config.RATE_LIMIT_MESSAGES_PER_MINUTE,
    ingestions: config.RATE_LIMIT_INGESTIONS_PER_MINUTE,
    uploads: config.RATE_LIMIT_UPLOADS_PER_MINUTE,
    pages: config.RATE_LIMIT_PAGES_PER_MINUTE,
    sharedReads: config.RATE_LIMIT_SHARED_READS_PER_MINUTE,
    follows: config.RATE_LIMIT_FOLLOWS_PER_MINUTE,
  },
  dailyTokens: config.DAILY_TOKEN_BUDGET,
  inFlight: {
    ingestions: config.PDF_MAX_IN_FLIGHT_PER_USER,
    replies: config.REPLIES_MAX_IN_FLIGHT_PER_USER,
    follows: config.FOLLOWS_MAX_IN_FLIGHT_PER_USER,
    followers: config.REPLY_MAX_FOLLOWERS,
  },
});

/** What a caller refused for work in flight is told to wait (seconds), and why. */
const IN_FLIGHT_REFUSALS: Record<InFlightKind, { retryAfter: number; code: string; message: (max: number) => string }> =
  {
    ingestions: {
      retryAfter: 10,
      code: 'TOO_MANY_INGESTIONS',
      message: (max) => `You already have ${max} PDF ingestions in progress; wait for one to finish`,
    },
    replies: {
      retryAfter: 5,
      code: 'TOO_MANY_REPLIES',
      message: (max) => `You already have ${max} replies in progress; wait for one to finish`,
    },
    follows: {
      retryAfter: 5,
      code: 'TOO_MANY_FOLLOWS',
      message: (max) => `You already have ${max} reply streams open; close one first`,
    },
    followers: {
      retryAfter: 5,
      code: 'TOO_MANY_FOLLOWERS',
      message: (max) => `This reply already has ${max} open streams of yours; close one first`,
    },
  };

/** A reply's tokens held against the budget until its real usage is known. */
export interface TokenReservation {
  userId: string;
  day: string;
  tokens: number;
  /** Where the tokens are held: the day's budget or the user's credits. */
  from: 'daily' | 'credits';
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** Old windows are collected by DynamoDB TTL after this long (never relied upon). */
const KEEP_SECONDS = 2 * 86_400;

export const tokenCounter = (day: string) => `TOKENS#${day}`;
/** A window's counter; a window longer than a minute says its length (minutes) in the name. */
const rateCounter = (name: RateLimitName, window: number, minutes: number) =>
  minutes === 1 ? `RATE#${name}#${window}` : `RATE#${name}#${minutes}m#${window}`;
export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export class UserLimits {
  constructor(
    private readonly counters: UsageCounters,
    private readonly slots: InFlightSlots,
    private readonly settings: LimitSettings,
    private readonly clock: Clock,
    private readonly credits: Credits,
  ) {}

  private now(): number {
    return this.clock().getTime();
  }

  private expiresAt(ms: number) {
    return Math.floor(ms / 1000) + KEEP_SECONDS;
  }

  private untilTomorrow(ms: number) {
    return Math.max(1, Math.ceil((DAY_MS - (ms % DAY_MS)) / 1000));
  }

  /**
   * Counts one request on a rate-limited route for `userId` (on a public route, `IP#<source ip>`);
   * LimitExceededError when the window's allowance is used up. A route with a burst counts in
   * windows of burst / rate minutes holding the burst: the same rate over the window, all of it
   * usable at once (docs/DECISIONS.md "Fair bulk ingestion").
   */
  async takeRequest(userId: string, name: RateLimitName): Promise<void> {
    const perMinute = this.settings.perMinute[name];
    if (!perMinute) return;
    const burst = Math.max(perMinute, this.settings.burst[name] ?? 0);
    const minutes = Math.ceil(burst / perMinute);
    const ms = this.now();
    const windowMs = minutes * MINUTE_MS;
    const window = Math.floor(ms / windowMs);
    const taken = await this.counters.tryAdd(
      { subject: userId, counter: rateCounter(name, window, minutes) },
      1,
      burst,
      this.expiresAt(ms),
    );
    if (taken === undefined) {
      const retryAfter = Math.max(1, Math.ceil(((window + 1) * windowMs - ms) / 1000));
      const message =
        minutes === 1
          ? `Too many requests: at most ${perMinute} per minute here`
          : `Too many requests: at most ${burst} per ${minutes} minutes here`;
      throw new LimitExceededError(message, retryAfter, 'RATE_LIMITED');
    }
  }

  /**
   * Holds `tokens` of today's budget for a reply, or of the credits once the day's budget cannot
   * hold them; LimitExceededError when neither can.
   */
  async reserveTokens(userId: string, tokens: number): Promise<TokenReservation | undefined> {
    const budget = this.settings.dailyTokens;
    if (!budget) return undefined;
    const ms = this.now();
    const day = utcDay(ms);
    const held = await this.counters.tryAdd(
      { subject: userId, counter: tokenCounter(day) },
      tokens,
      budget,
      this.expiresAt(ms),
    );
    if (held !== undefined) return { userId, day, tokens, from: 'daily' };
    if (await this.credits.reserve(userId, tokens)) return { userId, day, tokens, from: 'credits' };
    throw this.budgetSpent(ms);
  }

  /** Replaces a reservation by what the reply really used (0 when there was no reply). */
  async settle(reservation: TokenReservation | undefined, usedTokens: number): Promise<void> {
    if (!reservation) return;
    // Settled even when it used exactly what it held: the credits hold it until then.
    if (reservation.from === 'credits') {
      await this.credits.settle(reservation.userId, reservation.tokens, usedTokens);
      return;
    }
    if (usedTokens === reservation.tokens) return;
    await this.counters.add(
      { subject: reservation.userId, counter: tokenCounter(reservation.day) },
      usedTokens - reservation.tokens,
    );
  }

  /**
   * LimitExceededError when today's budget is already spent and no credits are left (admission of
   * work whose cost is known later).
   */
  async assertTokensLeft(userId: string): Promise<void> {
    const budget = this.settings.dailyTokens;
    if (!budget) return;
    const ms = this.now();
    if ((await this.counters.get({ subject: userId, counter: tokenCounter(utcDay(ms)) })) < budget) return;
    if ((await this.credits.balance(userId)).left > 0) return;
    throw this.budgetSpent(ms);
  }

  /**
   * Charges tokens already spent (embeddings), whatever the budget says; what goes past the day's
   * budget is drawn from the credits, as far as they go.
   */
  async chargeTokens(userId: string, tokens: number): Promise<void> {
    const budget = this.settings.dailyTokens;
    if (!budget || tokens <= 0) return;
    const ms = this.now();
    const used = await this.counters.add(
      { subject: userId, counter: tokenCounter(utcDay(ms)) },
      tokens,
      this.expiresAt(ms),
    );
    const pastBudget = Math.min(tokens, used - budget);
    if (pastBudget > 0) await this.credits.useUpTo(userId, pastBudget);
  }

  /**
   * Takes one of the user's slots for `kind` (of the one thing `of` names, when given: a reply's
   * followers) for `holder` until `leaseMs` from now (a slot whose holder `reclaimable` says is
   * done is taken over); LimitExceededError when all are held. Undefined when the limit is off.
   */
  async takeInFlight(
    userId: string,
    kind: InFlightKind,
    p: { holder: string; leaseMs: number; of?: string; reclaimable?: (slot: HeldSlot) => Promise<boolean> },
  ): Promise<HeldSlot | undefined> {
    const max = this.settings.inFlight[kind];
    if (!max) return undefined;
    const { of, ...take } = p;
    const key = { subject: userId, kind: of === undefined ? kind : `${kind}#${of}` };
    const slot = await this.slots.take(key, { ...take, max, now: this.now() });
    if (slot) return slot;
    const refusal = IN_FLIGHT_REFUSALS[kind];
    throw new LimitExceededError(refusal.message(max), refusal.retryAfter, refusal.code);
  }

  /** Moves a held slot's lease to `leaseMs` from now. */
  async extendInFlight(slot: HeldSlot | undefined, leaseMs: number): Promise<void> {
    if (slot) await this.slots.extend(slot, this.now() + leaseMs);
  }

  /** Frees a held slot (nothing when it is no longer this holder's). */
  async releaseInFlight(slot: HeldSlot | undefined): Promise<void> {
    if (slot) await this.slots.release(slot);
  }

  /** Frees the slot `holder` holds of the user's `kind`, if it still holds one. */
  async releaseInFlightOf(userId: string, kind: InFlightKind, holder: string): Promise<void> {
    if (this.settings.inFlight[kind]) await this.slots.releaseHeldBy({ subject: userId, kind }, holder);
  }

  private budgetSpent(ms: number) {
    return new LimitExceededError(
      `Your daily token budget (${this.settings.dailyTokens}) is used up; it renews at midnight UTC`,
      this.untilTomorrow(ms),
      'TOKEN_BUDGET_EXHAUSTED',
    );
  }
}

/** The limits of this configuration, counted in its table. */
export const userLimits = (db: DynamoDBDocumentClient, config: Config, clock: Clock): UserLimits =>
  new UserLimits(
    new UsageCounters(db, config.TABLE_NAME),
    new InFlightSlots(db, config.TABLE_NAME),
    limitSettings(config),
    clock,
    new Credits(db, config.TABLE_NAME),
  );
