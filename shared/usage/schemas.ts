import * as z from '../zod.ts';
import { example } from '../openapi/examples.ts';

// GET /me: the signed-in user and what they have used (docs/DECISIONS.md "Usage counters").

const count = (what: string) => z.number().check(z.int(), z.describe(what));

const tokensByModel = z
  .record(z.string(), z.number())
  .check(z.describe('Tokens by model id (chat and embedding models), as the provider counted them'));

export const USAGE_EXAMPLE = {
  tokens: {
    today: { 'gpt-4o-mini': 1840, 'text-embedding-3-small': 5210 },
    thisMonth: { 'gpt-4o-mini': 40210, 'text-embedding-3-small': 98120 },
  },
  budget: {
    dailyTokens: 100000,
    usedToday: 7050,
    leftToday: 92950,
    creditsGranted: 500000,
    creditsLeft: 480000,
    left: 572950,
  },
  pages: { ingested: 312, ocr: 24 },
  storage: { bytes: 48213760, quotaBytes: 1073741824 },
  files: 12,
  chats: 31,
};

export const usageSchema = z
  .object({
    tokens: z.object({
      today: tokensByModel,
      thisMonth: tokensByModel,
    }),
    budget: z.object({
      dailyTokens: count('DAILY_TOKEN_BUDGET: tokens a day (UTC); 0 when there is no budget'),
      usedToday: count("Tokens counted against today's budget"),
      leftToday: z.nullable(count("What is left of today's budget; null when there is no budget")),
      creditsGranted: count('Tokens granted by paid orders, less those refunded'),
      creditsLeft: count("Credits not used yet: drawn from once the day's budget is spent"),
      left: z.nullable(count('leftToday plus creditsLeft: what the user may still spend today; null when unlimited')),
    }),
    pages: z.object({
      ingested: count('Pages of the PDFs ingested (completed runs)'),
      ocr: count('Of those, pages whose text was recognised by OCR'),
    }),
    storage: z.object({
      bytes: count('Bytes of the files the user has'),
      quotaBytes: count('USER_STORAGE_MAX_BYTES: what the user may keep; 0 when unlimited'),
    }),
    files: count('Files the user has'),
    chats: count('Chats the user has'),
  })
  .check(example(USAGE_EXAMPLE));
export type Usage = z.infer<typeof usageSchema>;
