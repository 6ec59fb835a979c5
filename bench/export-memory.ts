import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createId } from '../shared/ids.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../infra/local/emulators.ts';
import { createTableInput } from '../infra/table.ts';
import { accountExportDepsOf } from '../shared/account-export/account-export-deps.ts';
import { buildPendingExports, requestExport } from '../shared/account-export/account-export.ts';
import { ChatRepository } from '../shared/chats/conversations/chat-repository.ts';
import { appendMessage } from '../shared/chats/conversations/message-repository.ts';
import { FileRepository } from '../shared/files/file-repository.ts';
import { FileStorage, uploadKey } from '../shared/files/storage.ts';
import { makeTextPdf } from '../test/helpers/make-pdf.ts';
import { startEmulatorsProcess, TSX_CLI } from './lib/service.ts';

// A one-off measurement of the account export's memory (docs/DECISIONS.md "Account export"): an
// account of 1,000 messages (10 chats of 100, ~2 KB each) and 20 PDFs written through the
// repositories and the bucket, then the build (buildPendingExports, what the data sweep runs) in
// a child process of its own, against emulators in a third: the child's peak RSS and heap are
// the build's. Run: npx tsx bench/export-memory.ts

const run = promisify(execFile);
const TABLE = 'export-bench';
const BUCKET = 'export-bench';
const CHATS = 10;
const MESSAGES_PER_CHAT = 100;
const PDFS = 20;
/** Pages of each PDF (EXPORT_BENCH_PDF_PAGES for scale: memory should not follow it). */
const PDF_PAGES = Number(process.env.EXPORT_BENCH_PDF_PAGES ?? 60);

function clientsOf(endpoints: { dynamodbEndpoint: string; fauxqsEndpoint: string }) {
  const local = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const raw = new DynamoDBClient({ ...local, endpoint: endpoints.dynamodbEndpoint });
  return {
    raw,
    db: DynamoDBDocumentClient.from(raw, { marshallOptions: { removeUndefinedValues: true } }),
    s3: new S3Client({ ...local, endpoint: endpoints.fauxqsEndpoint, forcePathStyle: true }),
  };
}

/** The child: builds the waiting export and prints its figures. */
async function buildChild() {
  const { db, s3 } = clientsOf(JSON.parse(process.env.EXPORT_BENCH_ENDPOINTS!));
  const deps = accountExportDepsOf({ db, s3, table: TABLE, bucket: BUCKET }, () => new Date());
  let peakHeap = 0;
  let peakRss = 0;
  const sample = () => {
    const m = process.memoryUsage();
    peakHeap = Math.max(peakHeap, m.heapUsed);
    peakRss = Math.max(peakRss, m.rss);
  };
  const before = process.memoryUsage().rss;
  const timer = setInterval(sample, 5);
  const started = Date.now();
  const built = await buildPendingExports(deps);
  clearInterval(timer);
  sample();
  process.stdout.write(
    `${JSON.stringify({ built, ms: Date.now() - started, rssBeforeKb: before >> 10, peakRssKb: peakRss >> 10, peakHeapKb: peakHeap >> 10, maxRssKb: process.resourceUsage().maxRSS })}\n`,
  );
}

async function main() {
  const emulators = await startEmulatorsProcess();
  try {
    const { raw, db, s3 } = clientsOf(emulators);
    await raw.send(new CreateTableCommand(createTableInput(TABLE)));
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    const userId = createId();
    const now = () => new Date().toISOString();
    const chats = new ChatRepository(db, TABLE);
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(45);
    for (let c = 0; c < CHATS; c++) {
      const chat = await chats.create(userId, { name: `Chat ${c}`, type: 'text' }, now());
      for (let m = 0; m < MESSAGES_PER_CHAT; m++) {
        await appendMessage(db, TABLE, {
          chatId: chat.id,
          userId,
          message: `${m}: ${text}`,
          messageType: m % 2 ? 'ai' : 'user',
          type: 'message',
          timestamp: now(),
        });
      }
    }
    const files = new FileRepository(db, TABLE);
    const storage = new FileStorage(s3, BUCKET);
    let pdfBytes = 0;
    // One document stored 20 times: generating is the slow part, and the build reads each copy.
    const pdf = await makeTextPdf(PDF_PAGES, 40);
    for (let f = 0; f < PDFS; f++) {
      pdfBytes += pdf.byteLength;
      const id = createId();
      const createdAt = now();
      await storage.put(uploadKey(userId, id), pdf, 'application/pdf');
      await files.create({
        id,
        userId,
        fileName: `paper-${f}.pdf`,
        contentType: 'application/pdf',
        size: pdf.byteLength,
        s3Key: uploadKey(userId, id),
        status: 'uploaded',
        createdAt,
        updatedAt: createdAt,
      } as Parameters<FileRepository['create']>[0]);
    }
    const deps = accountExportDepsOf({ db, s3, table: TABLE, bucket: BUCKET }, () => new Date());
    const { exportId } = await requestExport(deps, userId);

    const { stdout } = await run(process.execPath, [TSX_CLI, import.meta.filename, '--build'], {
      env: { ...process.env, EXPORT_BENCH_ENDPOINTS: JSON.stringify(emulators) },
    });
    const figures = JSON.parse(stdout.trim().split('\n').pop()!);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'exports/' }));
    const zip = listed.Contents?.find((o) => o.Key?.endsWith(`${exportId}.zip`));
    // Info-ZIP tests the archive (every entry's CRC), multipart and all.
    const dir = await mkdtemp(join(tmpdir(), 'export-bench-'));
    const file = join(dir, 'export.zip');
    const object = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: zip!.Key! }));
    await pipeline(object.Body as Readable, createWriteStream(file));
    const tested = await run('unzip', ['-tq', file]);
    await rm(dir, { recursive: true, force: true });
    console.log(
      JSON.stringify(
        {
          messages: CHATS * MESSAGES_PER_CHAT,
          pdfs: PDFS,
          pdfMb: +(pdfBytes / 2 ** 20).toFixed(1),
          zipMb: +((zip?.Size ?? 0) / 2 ** 20).toFixed(1),
          unzip: tested.stdout.trim(),
          ...figures,
        },
        null,
        1,
      ),
    );
  } finally {
    await emulators.stop();
  }
}

if (process.argv.includes('--build')) await buildChild();
else await main();
