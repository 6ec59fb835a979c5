import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { buildPendingExports } from '#shared/account-export/account-export.ts';
import { accountExportDeps } from '#test/helpers/erasure-deps.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { makePdfFromLines } from '#test/helpers/make-pdf.ts';
import { until } from '#test/helpers/until.ts';

// Collections through the gateway: CRUD and paging, files in and out, the limits, strangers
// refused as on the other routes, a file chat bound to a collection (it sees a file added after
// it was made, and no longer one taken out), and what deleting a file, a collection or the
// account does to them.

let app: TestApp;

const TOPICS = {
  trees: [
    'Trace trees compile each hot loop of the interpreter into native machine code.',
    'A trace tree grows a new branch whenever a side exit becomes hot.',
  ],
  gardens: [
    'Tomato seedlings need warm soil and plenty of morning sunlight in spring.',
    'Compost feeds the garden beds with nitrogen for the summer vegetables.',
  ],
  tides: [
    'Ocean tides follow the moon, rising twice a day along the northern coast.',
    'Spring tides are the largest, when sun and moon pull along one line.',
  ],
};

beforeAll(async () => {
  app = await startTestApp({
    pdfs: true,
    env: { COLLECTIONS_MAX_PER_USER: '4', COLLECTION_MAX_FILES: '2', COLLECTION_NAME_MAX_CHARS: '40' },
  });
  for (const [name, lines] of Object.entries(TOPICS))
    app.pdfs.serve(`/${name}.pdf`, { body: Buffer.from(await makePdfFromLines([lines])) });
});
afterAll(() => app?.stop());

type Who = { token: string; id: string };
const signIn = async (email: string): Promise<Who> => {
  const { token, user } = await app.signIn(email);
  return { token, id: user.id };
};

const call = (who: Who, method: string, path: string, body?: unknown) =>
  app.request(method, path, body === undefined ? { token: who.token } : { token: who.token, body });

async function newCollection(who: Who, name: string): Promise<string> {
  const res = await call(who, 'POST', '/collections', { name });
  expect([res.status, res.text]).toEqual([201, expect.any(String)]);
  return res.body.data.id;
}

/** An uploaded file (status uploaded, never ingested). */
async function upload(who: Who, fileName = 'doc.pdf'): Promise<string> {
  const res = await call(who, 'POST', '/upload', { fileName, contentType: 'application/pdf', size: 2000 });
  expect(res.status).toBe(201);
  return res.body.data.fileId;
}

/** A file ingested to completion from the PDF server (in a collection when one is given). */
async function ingested(who: Who, topic: keyof typeof TOPICS, collectionId?: string): Promise<string> {
  const fileId = await upload(who, `${topic}.pdf`);
  const body = { url: `${app.pdfs.url}/${topic}.pdf`, fileId, collectionId };
  const res = await call(who, 'POST', '/message/pdf', body);
  expect([200, 202]).toContain(res.status);
  await until(
    `${topic}.pdf completed`,
    async () => (await call(who, 'GET', `/message/pdf/${fileId}`)).body.data?.embeddingsData?.status,
    (status) => status === 'completed',
  );
  return fileId;
}

const filesOf = async (who: Who, collectionId: string): Promise<string[]> =>
  (await call(who, 'GET', `/collections/${collectionId}/files`)).body.data.map((f: { fileId: string }) => f.fileId);

test('create, read, rename, list and delete a collection; bad bodies and ids are 400', async () => {
  const alice = await signIn('crud@example.com');
  const created = await call(alice, 'POST', '/collections', { name: '  Compilers ' });
  expect(created.status).toBe(201);
  expect(created.body.data).toEqual({
    id: expect.any(String),
    userId: alice.id,
    name: 'Compilers',
    fileCount: 0,
    createdAt: expect.any(String),
    updatedAt: expect.any(String),
  });
  const id = created.body.data.id;
  expect((await call(alice, 'GET', `/collections/${id}`)).body.data).toEqual(created.body.data);

  const renamed = await call(alice, 'PUT', `/collections/${id}`, { name: 'Compiler papers' });
  expect([renamed.status, renamed.body.data.name]).toEqual([200, 'Compiler papers']);
  expect((await call(alice, 'GET', '/collections')).body.data.map((c: { name: string }) => c.name)).toEqual([
    'Compiler papers',
  ]);

  for (const body of [
    {},
    { name: '' },
    { name: '   ' },
    { name: 'x'.repeat(41) },
    { name: 'ok', extra: 1 },
    { name: 7 },
  ]) {
    const res = await call(alice, 'POST', '/collections', body);
    expect([JSON.stringify(body), res.status, res.body.success]).toEqual([JSON.stringify(body), 400, false]);
  }
  expect((await call(alice, 'PUT', `/collections/${id}`, { name: '' })).status).toBe(400);
  expect((await call(alice, 'GET', '/collections/not-an-id')).status).toBe(400);
  expect((await call(alice, 'PUT', `/collections/${id}/files/not-an-id`)).status).toBe(400);

  const deleted = await call(alice, 'DELETE', `/collections/${id}`);
  expect([deleted.status, deleted.body.data]).toEqual([200, { id, deleted: true }]);
  expect((await call(alice, 'GET', `/collections/${id}`)).status).toBe(404);
  expect((await call(alice, 'DELETE', `/collections/${id}`)).status).toBe(404);
  expect((await call(alice, 'GET', '/collections')).body.data).toEqual([]);
});

test('the list is paged newest first, and COLLECTIONS_MAX_PER_USER holds (a deleted one frees its place)', async () => {
  const alice = await signIn('paging@example.com');
  const ids: string[] = [];
  for (const name of ['one', 'two', 'three', 'four']) ids.push(await newCollection(alice, name));
  const refused = await call(alice, 'POST', '/collections', { name: 'five' });
  expect(refused.status).toBe(409);
  expect(refused.body.message).toMatch(/4 collections/);

  const first = await call(alice, 'GET', '/collections?limit=3');
  const cursor = first.headers.get('x-next-cursor');
  expect(cursor).toBeTruthy();
  const second = await call(alice, 'GET', `/collections?limit=3&cursor=${encodeURIComponent(cursor!)}`);
  expect(second.headers.get('x-next-cursor')).toBeNull();
  const listed = [...first.body.data, ...second.body.data].map((c: { id: string }) => c.id);
  expect(listed).toEqual([...ids].reverse());
  expect((await call(alice, 'GET', '/collections?cursor=junk')).status).toBe(400);

  await call(alice, 'DELETE', `/collections/${ids[0]}`);
  expect((await call(alice, 'POST', '/collections', { name: 'five' })).status).toBe(201);
});

test('files go in and out (idempotent), COLLECTION_MAX_FILES holds, and the file stays when taken out', async () => {
  const alice = await signIn('members@example.com');
  const id = await newCollection(alice, 'reading');
  const [a, b, c] = [await upload(alice), await upload(alice), await upload(alice)];

  const added = await call(alice, 'PUT', `/collections/${id}/files/${a}`);
  expect([added.status, added.body.data]).toEqual([200, { collectionId: id, fileId: a, added: true }]);
  expect((await call(alice, 'PUT', `/collections/${id}/files/${a}`)).body.data.added).toBe(false);
  expect((await call(alice, 'PUT', `/collections/${id}/files/${b}`)).body.data.added).toBe(true);
  const full = await call(alice, 'PUT', `/collections/${id}/files/${c}`);
  expect(full.status).toBe(409);
  expect(full.body.message).toMatch(/holds 2 files/);
  expect((await call(alice, 'GET', `/collections/${id}`)).body.data.fileCount).toBe(2);

  const files = await call(alice, 'GET', `/collections/${id}/files?limit=1`);
  expect(files.body.data).toEqual([expect.objectContaining({ status: 'uploaded', collectionIds: [id] })]);
  const rest = await call(
    alice,
    'GET',
    `/collections/${id}/files?limit=1&cursor=${encodeURIComponent(files.headers.get('x-next-cursor')!)}`,
  );
  expect([files.body.data[0].fileId, rest.body.data[0].fileId].sort()).toEqual([a, b].sort());

  const removed = await call(alice, 'DELETE', `/collections/${id}/files/${a}`);
  expect([removed.status, removed.body.data]).toEqual([200, { collectionId: id, fileId: a, removed: true }]);
  expect((await call(alice, 'DELETE', `/collections/${id}/files/${a}`)).status).toBe(404);
  expect(await filesOf(alice, id)).toEqual([b]);
  expect((await call(alice, 'GET', `/message/pdf/${a}`)).status).toBe(200); // the file stays
  expect((await call(alice, 'GET', `/message/pdf/${a}`)).body.data.embeddingsData.collectionIds).toBeUndefined();
  expect((await call(alice, 'PUT', `/collections/${id}/files/${c}`)).body.data.added).toBe(true); // room again
});

test('deleting a file takes it out of its collections; deleting a collection leaves its files', async () => {
  const alice = await signIn('deletes@example.com');
  const [one, two] = [await newCollection(alice, 'one'), await newCollection(alice, 'two')];
  const [a, b] = [await upload(alice), await upload(alice)];
  for (const c of [one, two]) for (const f of [a, b]) await call(alice, 'PUT', `/collections/${c}/files/${f}`);

  expect((await call(alice, 'DELETE', `/upload/${a}`)).status).toBe(200);
  expect(await filesOf(alice, one)).toEqual([b]);
  expect(await filesOf(alice, two)).toEqual([b]);
  expect((await call(alice, 'GET', `/collections/${one}`)).body.data.fileCount).toBe(1);

  expect((await call(alice, 'DELETE', `/collections/${one}`)).status).toBe(200);
  const file = (await call(alice, 'GET', `/message/pdf/${b}`)).body.data.embeddingsData;
  expect(file.collectionIds).toEqual([two]);
});

test("a stranger's collection, or a stranger's file, answers 404 as a missing one does, and changes nothing", async () => {
  const alice = await signIn('owner@example.com');
  const bob = await signIn('stranger@example.com');
  const aliceCollection = await newCollection(alice, 'private');
  const aliceFile = await upload(alice);
  await call(alice, 'PUT', `/collections/${aliceCollection}/files/${aliceFile}`);
  const bobCollection = await newCollection(bob, 'mine');
  const bobFile = await upload(bob);
  const missing = 'k0000000000000000000000a';

  for (const [method, path, body] of [
    ['GET', `/collections/${aliceCollection}`],
    ['PUT', `/collections/${aliceCollection}`, { name: 'taken' }],
    ['DELETE', `/collections/${aliceCollection}`],
    ['GET', `/collections/${aliceCollection}/files`],
    ['PUT', `/collections/${aliceCollection}/files/${bobFile}`],
    ['DELETE', `/collections/${aliceCollection}/files/${aliceFile}`],
    ['PUT', `/collections/${bobCollection}/files/${aliceFile}`],
    ['GET', `/collections/${missing}`],
    ['PUT', `/collections/${bobCollection}/files/${missing}`],
    ['POST', '/chat', { type: 'file', collectionId: aliceCollection }],
    ['POST', '/message/pdf', { url: `${app.pdfs.url}/trees.pdf`, fileId: bobFile, collectionId: aliceCollection }],
  ] as [string, string, unknown?][]) {
    const res = await call(bob, method, path, body);
    expect([method, path, res.status, res.body.success]).toEqual([method, path, 404, false]);
  }
  expect((await call(alice, 'GET', `/collections/${aliceCollection}`)).body.data).toMatchObject({
    name: 'private',
    fileCount: 1,
  });
  expect(await filesOf(alice, aliceCollection)).toEqual([aliceFile]);
  expect(await filesOf(bob, bobCollection)).toEqual([]);
  expect((await call(bob, 'GET', '/collections')).body.data.map((c: { id: string }) => c.id)).toEqual([bobCollection]);
  // A chat of type text cannot be bound to a collection.
  expect((await call(alice, 'POST', '/chat', { type: 'text', collectionId: aliceCollection })).status).toBe(400);
});

test('POST /message/pdf with collectionId: the file joins the collection', async () => {
  const alice = await signIn('ingest@example.com');
  const id = await newCollection(alice, 'ingested');
  const fileId = await ingested(alice, 'tides', id);
  expect(await filesOf(alice, id)).toEqual([fileId]);
  expect((await call(alice, 'GET', `/collections/${id}/files`)).body.data[0].status).toBe('completed');
});

test('a file chat over a collection answers from a file added after the chat was made, and no longer from one taken out', async () => {
  const alice = await signIn('library@example.com');
  const id = await newCollection(alice, 'library');
  const trees = await ingested(alice, 'trees', id);
  const gardens = await ingested(alice, 'gardens');
  const chat = await call(alice, 'POST', '/chat', { type: 'file', name: 'library', collectionId: id });
  expect([chat.status, chat.body.data.collectionId]).toEqual([201, id]);
  const chatId = chat.body.data.id;

  const sourcesFor = async (prompt: string): Promise<string[]> => {
    const res = await call(alice, 'POST', '/message/logged-in', { chatId, prompt });
    expect([res.status, res.text]).toEqual([200, expect.any(String)]);
    return [...new Set((res.body.data.sources ?? []).map((s: { fileId: string }) => s.fileId))] as string[];
  };
  const gardenPrompt = 'What do tomato seedlings need in spring?';
  expect(await sourcesFor(gardenPrompt)).not.toContain(gardens);

  expect((await call(alice, 'PUT', `/collections/${id}/files/${gardens}`)).status).toBe(200);
  expect(await sourcesFor(gardenPrompt)).toContain(gardens);
  const shown = (await call(alice, 'GET', `/chat/${chatId}`)).body.data.files.map((f: { fileId: string }) => f.fileId);
  expect(shown.sort()).toEqual([trees, gardens].sort());

  expect((await call(alice, 'DELETE', `/collections/${id}/files/${trees}`)).status).toBe(200);
  expect(await sourcesFor('How do trace trees compile hot loops?')).toEqual([gardens]);

  // A deleted collection leaves the chat with nothing to search, not an error.
  expect((await call(alice, 'DELETE', `/collections/${id}`)).status).toBe(200);
  expect(await sourcesFor(gardenPrompt)).toEqual([]);
});

test('the account export holds the collections with their file ids', async () => {
  const alice = await signIn('export-collections@example.com');
  const id = await newCollection(alice, 'exported');
  const fileId = await upload(alice);
  await call(alice, 'PUT', `/collections/${id}/files/${fileId}`);
  const { exportId } = (await call(alice, 'POST', '/me/export')).body.data;
  await buildPendingExports(accountExportDeps(app));
  const ready = await call(alice, 'GET', `/me/export/${exportId}`);
  expect(ready.body.data.status).toBe('ready');
  const dir = mkdtempSync(join(tmpdir(), 'collections-export-'));
  try {
    const zip = join(dir, 'export.zip');
    writeFileSync(zip, Buffer.from(await (await fetch(ready.body.data.url)).arrayBuffer()));
    const script = "import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read('collections.json').decode())";
    const collections = JSON.parse(execFileSync('python3', ['-c', script, zip], { encoding: 'utf8' }));
    expect(collections).toEqual([expect.objectContaining({ id, name: 'exported', fileCount: 1, fileIds: [fileId] })]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the account erasure deletes the collections, their files and counters with the account', async () => {
  const alice = await signIn('erase-collections@example.com');
  const id = await newCollection(alice, 'to erase');
  const fileId = await upload(alice);
  await call(alice, 'PUT', `/collections/${id}/files/${fileId}`);
  expect((await call(alice, 'DELETE', '/me')).status).toBeLessThan(300);
  const { db } = app.clients();
  const left = await until(
    'the erasure to remove the collection',
    async () =>
      (
        await db.send(
          new ScanCommand({
            TableName: app.tableName,
            FilterExpression: 'contains(PK, :c) OR contains(PK, :u)',
            ExpressionAttributeValues: { ':c': id, ':u': alice.id },
          }),
        )
      ).Items ?? [],
    (items) => items.every((i) => !String(i.PK).startsWith('COLLECTION#')),
  );
  expect(left.filter((i) => String(i.PK).startsWith('COLLECTION#') || String(i.SK) === 'COLLECTIONS')).toEqual([]);
});
