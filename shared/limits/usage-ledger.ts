import { BatchGetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../clock.ts';

// What a user has used, counted where the work happens (docs/DECISIONS.md "Usage counters"), so
// GET /me reads a handful of items instead of the user's chats and files. Beside the limits'
// counters in the user's `LIMIT#<user>` partition:
//   USAGE#<yyyy-mm>     tokens by model this month, `tokens:<model>`
//   USAGE#<yyyy-mm-dd>  tokens by model that day (collected by TTL after two days)
//   USAGE               totals: pages ingested, pages recognised by OCR, files and their bytes, chats
// Each change is one UpdateItem of ADDs; tokens by model are two (the day's and the month's).

export type UsageTotal = 'pages' | 'ocrPages' | 'files' | 'bytes' | 'chats';

export interface UsageSnapshot {
  tokensToday: Record<string, number>;
  tokensThisMonth: Record<string, number>;
  totals: Record<UsageTotal, number>;
  /** The other counters of the partition asked for (by sort key), `used` of each (0 when absent). */
  counters: Record<string, number>;
  /** The CREDITS item as stored (undefined when none). */
  credits?: Record<string, unknown>;
}

const TOKENS_PREFIX = 'tokens:';
const TOTALS = 'USAGE';
const DAY_KEEP_SECONDS = 2 * 86_400;

const key = (userId: string, sk: string) => ({ PK: `LIMIT#${userId}`, SK: sk });
export const usageDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const usageMonth = (ms: number) => new Date(ms).toISOString().slice(0, 7);

function tokensOf(item: Record<string, unknown> | undefined): Record<string, number> {
  const byModel: Record<string, number> = {};
  for (const [name, value] of Object.entries(item ?? {})) {
    if (name.startsWith(TOKENS_PREFIX) && typeof value === 'number') byModel[name.slice(TOKENS_PREFIX.length)] = value;
  }
  return byModel;
}

export class UsageLedger {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly clock: Clock,
  ) {}

  /** Adds tokens spent by model to today's and this month's counters (zeros left out). */
  async addTokens(userId: string, byModel: Record<string, number>): Promise<void> {
    const spent = Object.entries(byModel).filter(([, tokens]) => tokens > 0);
    if (!spent.length) return;
    const names: Record<string, string> = {};
    const values: Record<string, number> = {};
    spent.forEach(([model, tokens], i) => {
      names[`#m${i}`] = `${TOKENS_PREFIX}${model}`;
      values[`:m${i}`] = tokens;
    });
    const adds = spent.map((_, i) => `#m${i} :m${i}`).join(', ');
    const ms = this.clock().getTime();
    await Promise.all([
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key(userId, `USAGE#${usageMonth(ms)}`),
          UpdateExpression: `ADD ${adds}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      ),
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key(userId, `USAGE#${usageDay(ms)}`),
          UpdateExpression: `ADD ${adds} SET expiresAt = :expiresAt`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ...values, ':expiresAt': Math.floor(ms / 1000) + DAY_KEEP_SECONDS },
        }),
      ),
    ]);
  }

  /** Adds to the user's totals (negative to take away), in one write. */
  async addTotals(userId: string, amounts: Partial<Record<UsageTotal, number>>): Promise<void> {
    const changes = Object.entries(amounts).filter(([, n]) => n);
    if (!changes.length) return;
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: key(userId, TOTALS),
        UpdateExpression: `ADD ${changes.map(([name]) => `#${name} :${name}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(changes.map(([name]) => [`#${name}`, name])),
        ExpressionAttributeValues: Object.fromEntries(changes.map(([name, n]) => [`:${name}`, n])),
      }),
    );
  }

  /** Every usage item of the user and the given counters, in one consistent batch read. */
  async read(userId: string, counters: readonly string[]): Promise<UsageSnapshot> {
    const ms = this.clock().getTime();
    const today = `USAGE#${usageDay(ms)}`;
    const month = `USAGE#${usageMonth(ms)}`;
    const sortKeys = [today, month, TOTALS, 'CREDITS', ...counters];
    const out = await this.db.send(
      new BatchGetCommand({
        RequestItems: { [this.table]: { Keys: sortKeys.map((sk) => key(userId, sk)), ConsistentRead: true } },
      }),
    );
    // Few small keys of one partition: a batch that comes back partly unprocessed is read again.
    const items = new Map<string, Record<string, unknown>>();
    for (const item of out.Responses?.[this.table] ?? []) items.set(item.SK as string, item);
    const unprocessed = out.UnprocessedKeys?.[this.table]?.Keys ?? [];
    if (unprocessed.length) return this.read(userId, counters);
    const totals = items.get(TOTALS);
    const count = (name: UsageTotal) => Math.max(0, (totals?.[name] as number | undefined) ?? 0);
    return {
      tokensToday: tokensOf(items.get(today)),
      tokensThisMonth: tokensOf(items.get(month)),
      totals: {
        pages: count('pages'),
        ocrPages: count('ocrPages'),
        files: count('files'),
        bytes: count('bytes'),
        chats: count('chats'),
      },
      counters: Object.fromEntries(counters.map((sk) => [sk, (items.get(sk)?.used as number | undefined) ?? 0])),
      credits: items.get('CREDITS'),
    };
  }
}
