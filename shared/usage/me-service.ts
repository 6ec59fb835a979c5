import type { Clock } from '../clock.ts';
import { NotFoundError } from '../errors.ts';
import { tokenCounter, utcDay } from '../limits/user-limits.ts';
import type { UsageLedger } from '../limits/usage-ledger.ts';
import type { UserRepository } from '../users/user-repository.ts';
import type { Usage } from './schemas.ts';

// GET /me: the user and their usage, from the user's counters (docs/DECISIONS.md "Usage
// counters"): one profile read and one batch read of the `LIMIT#<user>` items, whatever the
// number of the user's chats, files and messages.

export interface MeDeps {
  users: Pick<UserRepository, 'get'>;
  usage: Pick<UsageLedger, 'read'>;
  clock: Clock;
  settings: { dailyTokens: number; storageMaxBytes: number };
}

const numberIn = (item: Record<string, unknown> | undefined, name: string) =>
  Math.max(0, (item?.[name] as number | undefined) ?? 0);

export async function getMe(deps: MeDeps, userId: string) {
  const todayCounter = tokenCounter(utcDay(deps.clock().getTime()));
  const [user, snapshot] = await Promise.all([deps.users.get(userId), deps.usage.read(userId, [todayCounter])]);
  if (!user) throw new NotFoundError('No such user');
  const { dailyTokens, storageMaxBytes } = deps.settings;
  const usedToday = snapshot.counters[todayCounter] ?? 0;
  const creditsLeft = numberIn(snapshot.credits, 'left');
  const leftToday = dailyTokens ? Math.max(0, dailyTokens - usedToday) : null;
  const usage: Usage = {
    tokens: { today: snapshot.tokensToday, thisMonth: snapshot.tokensThisMonth },
    budget: {
      dailyTokens,
      usedToday,
      leftToday,
      creditsGranted: numberIn(snapshot.credits, 'granted'),
      creditsLeft,
      left: leftToday === null ? null : leftToday + creditsLeft,
    },
    pages: { ingested: snapshot.totals.pages, ocr: snapshot.totals.ocrPages },
    storage: { bytes: snapshot.totals.bytes, quotaBytes: storageMaxBytes },
    files: snapshot.totals.files,
    chats: snapshot.totals.chats,
  };
  return { user, usage };
}
