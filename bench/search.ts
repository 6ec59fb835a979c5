import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../infra/local/emulators.ts';
import { projectRoot } from '../infra/local/runtime.ts';
import { ChatRepository } from '../shared/chats/conversations/chat-repository.ts';
import { messageKey } from '../shared/chats/keys.ts';
import type { Message } from '../shared/chats/schemas.ts';
import { SearchIndex } from '../shared/chats/search/search-index.ts';
import { batchWriteAll, mapLimit } from '../shared/dynamo.ts';
import type { Benchmark } from './lib/context.ts';
import { absoluteCheck, info, median, p99, quantile } from './lib/report.ts';

// Chat search: GET /chat/search through the gateway for ONE user with SEARCH_BENCH_CHATS chats
// (default 1,000) of 50 messages each (50,000), seeded straight into the table: the chats
// through ChatRepository.create (their names indexed as the API does), the messages as their
// items, then indexed by SearchIndex.addMessages (the same index items addMessage writes, one
// update per term and day instead of per term and message). The text is generated: English
// words with a Zipf distribution over the words of this repository's docs, one chat in twenty
// in Japanese, a rare word in three messages. The days the messages span grow with their number
// (120 days for 50,000), so a smaller run has the same density per day.
// Query mix, each kind in turn: a common word, a rare word, two words, CJK, no match. Baseline:
// GET /chat?limit=20 (one index query) by the same user through the same gateway, interleaved.
// Target: search p50 ≤ 300 ms.

const CHATS = Number(process.env.SEARCH_BENCH_CHATS ?? 1_000);
const MESSAGES_PER_CHAT = 50;
const DAYS_PER_1000_CHATS = 120;
const ROUNDS = Number(process.env.SEARCH_BENCH_ROUNDS ?? 30);
const TARGET_P50_MS = 300;
const RARE = 'zanzibar';

const CJK_SENTENCES = [
  '日本語の文章を読みたいです',
  '東京の天気はどうですか',
  '明日の会議の資料を準備しました',
  'この問題の解決方法を教えてください',
  '新しいプロジェクトの計画について話しましょう',
  '京都で美味しい料理を食べました',
  'データベースの設計を見直す必要があります',
  '来週の出張の予定を確認してください',
];

/** A deterministic generator (mulberry32), so every run seeds the same text. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The words of the docs, most frequent first (the Zipf ranks). */
function vocabulary(): string[] {
  const counts = new Map<string, number>();
  const files = [
    join(projectRoot, 'README.md'),
    ...readdirSync(join(projectRoot, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(projectRoot, 'docs', f)),
  ];
  for (const f of files)
    for (const w of readFileSync(f, 'utf8')
      .toLowerCase()
      .match(/[a-z]{3,12}/g) ?? [])
      counts.set(w, (counts.get(w) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([w]) => w)
    .filter((w) => w !== RARE);
}

function textGenerator(words: string[], rand: () => number) {
  // Zipf (s = 1): the cumulative weights of 1/rank, sampled by binary search.
  const cumulative: number[] = [];
  let total = 0;
  for (let i = 0; i < words.length; i++) {
    total += 1 / (i + 1);
    cumulative.push(total);
  }
  const word = () => {
    const x = rand() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return words[lo]!;
  };
  const between = (min: number, max: number) => min + Math.floor(rand() * (max - min + 1));
  return {
    english: (min: number, max: number) => {
      const n = between(min, max);
      const out = Array.from({ length: n }, word);
      out[0] = out[0]![0]!.toUpperCase() + out[0]!.slice(1);
      return `${out.join(' ')}.`;
    },
    japanese: (sentences: number) =>
      Array.from({ length: sentences }, () => CJK_SENTENCES[Math.floor(rand() * CJK_SENTENCES.length)]).join('。'),
  };
}

export const search: Benchmark = {
  name: 'search',
  title: 'GET /chat/search for one user with 1,000 chats and 50,000 messages: p50/p99 over a query mix',
  async run(ctx) {
    const svc = await ctx.service();
    const { token, userId } = await svc.signIn(`bench-search-${CHATS}@example.com`);
    const db = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: svc.emulators.dynamodbEndpoint,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
      }),
      { marshallOptions: { removeUndefinedValues: true } },
    );
    const table = svc.runtime.tableName;
    try {
      // --- Seed ------------------------------------------------------------------------------
      const rand = random(42);
      const words = vocabulary();
      const text = textGenerator(words, rand);
      const days = Math.max(1, Math.round((DAYS_PER_1000_CHATS * CHATS) / 1000));
      const start = Date.parse('2026-01-01T00:00:00.000Z');
      const span = days * 86_400_000;
      const chats = new ChatRepository(db, table);
      const t0 = performance.now();
      const created = await mapLimit(
        Array.from({ length: CHATS }, (_, i) => i),
        8,
        (i) =>
          chats.create(
            userId,
            { name: i % 20 === 7 ? `日本語の練習 ${i}` : text.english(2, 5).slice(0, -1), type: 'text' },
            new Date(start + Math.floor((i * span) / CHATS)).toISOString(),
          ),
      );
      const chatsMs = performance.now() - t0;
      const messages: Message[] = [];
      const rareAt = new Set(
        [Math.floor(CHATS / 5), Math.floor(CHATS / 2), CHATS - 3].map((c) => c * MESSAGES_PER_CHAT + 3),
      );
      created.forEach((chat, c) => {
        const japanese = c % 20 === 7;
        const opened = Date.parse(chat.createdAt);
        for (let s = 1; s <= MESSAGES_PER_CHAT; s++) {
          const prompt = s % 2 === 1;
          let body = japanese ? text.japanese(prompt ? 1 : 4) : prompt ? text.english(8, 16) : text.english(40, 120);
          if (rareAt.has(c * MESSAGES_PER_CHAT + s)) body = `${body} ${RARE}`;
          messages.push({
            id: `m${c.toString(36)}x${s.toString(36)}`.padEnd(24, '0'),
            chatId: chat.id,
            userId,
            message: body,
            messageType: prompt ? 'user' : 'ai',
            type: 'message',
            sequenceNumber: s,
            timestamp: new Date(opened + s * 90_000).toISOString(),
          });
        }
      });
      const t1 = performance.now();
      await batchWriteAll(
        db,
        table,
        messages.map((m) => ({ PutRequest: { Item: { ...messageKey(m.chatId, m.sequenceNumber), ...m } } })),
        4,
      );
      const messagesMs = performance.now() - t1;
      const t2 = performance.now();
      const updates = await new SearchIndex(db, table).addMessages(messages, 8);
      const indexMs = performance.now() - t2;
      ctx.log(
        `search: seeded ${CHATS} chats (${(chatsMs / 1000).toFixed(1)} s), ${messages.length} messages (${(messagesMs / 1000).toFixed(1)} s), ${updates} index blocks (${(indexMs / 1000).toFixed(1)} s)`,
      );

      // --- Measure ---------------------------------------------------------------------------
      const mid = (rank: number) => words[Math.min(rank, words.length - 1)]!;
      const queries: Record<string, string> = {
        'common word': words[0]!,
        'rare word': RARE,
        'two words': `${mid(40)} ${mid(60)}`,
        CJK: '日本',
        'no match': 'qwertyuiop',
      };
      const samples: Record<string, number[]> = Object.fromEntries(Object.keys(queries).map((k) => [k, []]));
      const hits: Record<string, number> = {};
      const baseline: number[] = [];
      const get = async (path: string) => {
        const res = await svc.api('GET', path, token);
        if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.body.slice(0, 300)}`);
        return res;
      };
      for (let round = -2; round < ROUNDS; round++) {
        for (const [kind, q] of Object.entries(queries)) {
          const res = await get(`/chat/search?q=${encodeURIComponent(q)}&limit=20`);
          const list = await get('/chat?limit=20');
          if (round < 0) continue; // warm-up
          samples[kind]!.push(res.ms);
          baseline.push(list.ms);
          hits[kind] = res.json.data.length;
        }
      }
      const all = Object.values(samples).flat();
      return {
        checks: [
          absoluteCheck(
            'search p50 (query mix)',
            median(all),
            'ms',
            { max: TARGET_P50_MS },
            {
              baseline: median(baseline),
              ratio: median(all) / median(baseline),
            },
          ),
          info('search p99 (query mix)', p99(all), 'ms', { baseline: p99(baseline), ratio: p99(all) / p99(baseline) }),
          info('messages', messages.length, ''),
          info('index blocks written (term × day)', updates, ''),
          info('seeding: chats + messages + index', (chatsMs + messagesMs + indexMs) / 1000, 's'),
        ],
        details: [
          {
            title: `search by query kind (${ROUNDS} each, limit 20; baseline GET /chat?limit=20 p50 ${median(baseline).toFixed(1)} ms)`,
            header: ['kind', 'q', 'hits on page 1', 'p50 ms', 'p90 ms', 'p99 ms', 'p50 ÷ baseline'],
            rows: Object.entries(samples).map(([kind, s]) => [
              kind,
              queries[kind]!,
              hits[kind] ?? 0,
              median(s),
              quantile(s, 0.9),
              p99(s),
              `${(median(s) / median(baseline)).toFixed(2)} ×`,
            ]),
          },
        ],
        notes: [
          `One user: ${CHATS} chats × ${MESSAGES_PER_CHAT} messages over ${days} days; seeded in ${((chatsMs + messagesMs + indexMs) / 1000).toFixed(0)} s (chats ${(chatsMs / 1000).toFixed(0)} s, messages ${(messagesMs / 1000).toFixed(0)} s, index ${(indexMs / 1000).toFixed(0)} s).`,
          'Baseline: GET /chat?limit=20 by the same user, one request after each search (the gateway, auth and one DynamoDB query).',
        ],
        data: { samples, baseline, updates, seedMs: { chats: chatsMs, messages: messagesMs, index: indexMs } },
      };
    } finally {
      db.destroy();
    }
  },
};
