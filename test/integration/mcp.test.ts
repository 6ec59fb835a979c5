import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { makePdfFromLines } from '#test/helpers/make-pdf.ts';
import { until } from '#test/helpers/until.ts';

// POST /api/v1/mcp driven by the official SDK's Client over StreamableHTTPClientTransport, as an
// agent connects: the tools listed with their schemas, each called (text and structuredContent),
// two connections at once (stateless: no session id), a stranger's ids are error results that
// carry none of the owner's data, and no token or a bad one is 401 before any tool runs.

let app: TestApp;
let alice: string;
let bob: string;
let fileId: string;
let collectionId: string;
const open: Client[] = [];

const PAGES = [
  ['Trace trees compile each hot loop of the interpreter into native machine code.'],
  ['A trace tree grows a new branch whenever a side exit becomes hot.'],
];

async function connect(token: string | undefined): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), {
    requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} },
  });
  await client.connect(transport);
  open.push(client);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

beforeAll(async () => {
  app = await startTestApp({ pdfs: { '/trees.pdf': { body: Buffer.from(await makePdfFromLines(PAGES)) } } });
  alice = (await app.signIn('mcp-alice@example.com')).token;
  bob = (await app.signIn('mcp-bob@example.com')).token;
  const upload = await app.request('POST', '/upload', {
    token: alice,
    body: { fileName: 'trees.pdf', contentType: 'application/pdf', size: 2000 },
  });
  fileId = upload.body.data.fileId;
  await app.request('POST', '/message/pdf', { token: alice, body: { url: `${app.pdfs.url}/trees.pdf`, fileId } });
  await until(
    'trees.pdf completed',
    async () =>
      (await app.request('GET', `/message/pdf/${fileId}`, { token: alice })).body.data?.embeddingsData?.status,
    (status) => status === 'completed',
  );
  collectionId = (await app.request('POST', '/collections', { token: alice, body: { name: 'compilers' } })).body.data
    .id;
  await app.request('PUT', `/collections/${collectionId}/files/${fileId}`, { token: alice });
});
afterAll(async () => {
  await Promise.all(open.map((c) => c.close()));
  await app?.stop();
});

test('the five tools are listed, each with an input and an output schema', async () => {
  const client = await connect(alice);
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(['ask', 'list_collections', 'list_files', 'read_part', 'search']);
  for (const tool of tools) {
    expect(tool.inputSchema.type).toBe('object');
    expect(tool.outputSchema?.type).toBe('object');
  }
  const readPart = tools.find((t) => t.name === 'read_part')!;
  expect(readPart.inputSchema.required?.sort()).toEqual(['fileId', 'part']);
});

test('each tool answers text and structuredContent, over two connections at once (no session kept)', async () => {
  const [first, second] = [await connect(alice), await connect(alice)];
  // Stateless: the server issued no session id to either connection.
  expect((first as unknown as { _transport: StreamableHTTPClientTransport })._transport.sessionId).toBeUndefined();

  const [search, files] = await Promise.all([
    call(first, 'search', { query: 'side exit branch', k: 2 }),
    call(second, 'list_files', { collectionId }),
  ]);
  expect(search.isError).toBeFalsy();
  const passages = (search.structuredContent as { passages: { fileId: string; page: number; quote: string }[] })
    .passages;
  expect(passages[0]).toMatchObject({ fileId, page: 2, quote: expect.stringContaining('side exit') });
  expect(textOf(search)).toContain('trees.pdf, page 2');
  expect(files.structuredContent).toEqual({
    files: [{ fileId, fileName: 'trees.pdf', status: 'completed', pages: 2, createdAt: expect.any(String) }],
  });

  const collections = await call(second, 'list_collections', {});
  expect(collections.structuredContent).toEqual({
    collections: [{ id: collectionId, name: 'compilers', fileCount: 1, createdAt: expect.any(String) }],
  });
  expect(JSON.parse(textOf(collections))).toEqual(collections.structuredContent);

  const part = await call(first, 'read_part', { fileId, part: 1 });
  expect(part.structuredContent).toEqual({
    fileId,
    fileName: 'trees.pdf',
    location: { type: 'page', page: 1 },
    part: 1,
    parts: 2,
    text: expect.stringContaining('Trace trees compile each hot loop'),
  });
  expect(textOf(part)).toContain('part 1 of 2');

  const ask = await call(second, 'ask', { question: 'When does a trace tree grow a new branch?', collectionId });
  expect(ask.isError).toBeFalsy();
  const answer = ask.structuredContent as { answer: string; citations: { index: number; fileId: string }[] };
  expect(answer.answer).toContain('[1]');
  expect(answer.citations[0]).toMatchObject({ index: 1, fileId, fileName: 'trees.pdf', verified: true });
  expect(textOf(ask)).toContain('Sources:');
});

test('an API key connects as its user: the server needs its read scope, search and ask their own scopes', async () => {
  const keyWith = async (scopes: string[]) =>
    (await app.request('POST', '/me/api-keys', { token: alice, body: { name: `mcp ${scopes.join(' ')}`, scopes } }))
      .body.data.key as string;
  const [every, readOnly, chatOnly] = await Promise.all([
    keyWith(['chat', 'search', 'files', 'read']),
    keyWith(['read']),
    keyWith(['chat']),
  ]);

  const full = await connect(every);
  const part = await call(full, 'read_part', { fileId, part: 2 });
  expect(part.structuredContent).toMatchObject({ fileId, part: 2, text: expect.stringContaining('side exit') });
  const ask = await call(full, 'ask', { question: 'When does a trace tree grow a new branch?', fileIds: [fileId] });
  expect(ask.isError).toBeFalsy();
  expect((ask.structuredContent as { citations: { fileId: string }[] }).citations[0]).toMatchObject({ fileId });

  // Read only: listing and reading, but not searching or asking (an error result naming the scope).
  const reader = await connect(readOnly);
  expect((await call(reader, 'list_files', {})).structuredContent).toMatchObject({ files: [{ fileId }] });
  const [search, question] = await Promise.all([
    call(reader, 'search', { query: 'side exit' }),
    call(reader, 'ask', { question: 'What is a trace tree?' }),
  ]);
  expect(search).toMatchObject({
    isError: true,
    content: [{ text: 'This API key lacks the scope "search" this tool needs' }],
  });
  expect(question).toMatchObject({
    isError: true,
    content: [{ text: 'This API key lacks the scope "chat" this tool needs' }],
  });

  // Without read, the server itself is refused (403 from the route, before any tool).
  await expect(connect(chatOnly)).rejects.toMatchObject({ code: 403 });
});

test('bad arguments and a page past the end are error results, not protocol failures', async () => {
  const client = await connect(alice);
  const past = await call(client, 'read_part', { fileId, part: 3 });
  expect(past).toMatchObject({
    isError: true,
    content: [{ type: 'text', text: expect.stringContaining('2 part(s)') }],
  });
  const invalid = await call(client, 'read_part', { fileId, part: 0 });
  expect(invalid.isError).toBe(true);
});

test("another user's file and collection ids give error results, never the owner's data", async () => {
  const stranger = await connect(bob);
  const results = await Promise.all([
    call(stranger, 'read_part', { fileId, part: 1 }),
    call(stranger, 'list_files', { collectionId }),
    call(stranger, 'search', { query: 'trace tree', fileIds: [fileId] }),
    call(stranger, 'ask', { question: 'What is a trace tree?', collectionId }),
  ]);
  for (const r of results) {
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    expect(textOf(r)).toMatch(/not found/i);
    expect(textOf(r)).not.toMatch(/trace trees compile|trees\.pdf|compilers/i);
  }
  // Without ids, the stranger sees only their own (nothing).
  expect((await call(stranger, 'list_files', {})).structuredContent).toEqual({ files: [] });
  expect((await call(stranger, 'search', { query: 'trace tree' })).structuredContent).toEqual({ passages: [] });
});

test('no token or a made-up one is 401 before any tool; protocol refusals are 4xx in the route shape', async () => {
  await expect(connect(undefined)).rejects.toMatchObject({
    code: 401,
    message: expect.stringContaining('Authorization'),
  });
  await expect(connect('made.up.token')).rejects.toMatchObject({ code: 401 });
  // An Accept header without text/event-stream: the SDK's 406, as `{ message }`.
  const refused = await app.request('POST', '/mcp', {
    token: alice,
    headers: { accept: 'application/json' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  });
  expect(refused.status).toBe(406);
  expect(refused.body).toEqual({ message: expect.stringContaining('Not Acceptable') });
  // Not JSON-RPC at all: 400 from the route's schema.
  expect((await app.request('POST', '/mcp', { token: alice, body: { hello: 'world' } })).status).toBe(400);
  // No event stream and no session: GET and DELETE are 405 with Allow (answered by the gateway,
  // as Streamable HTTP asks; the SDK's client goes on with POST alone).
  for (const method of ['GET', 'DELETE'] as const) {
    const notAllowed = await app.request(method, '/mcp', { token: alice, headers: { accept: 'text/event-stream' } });
    expect(notAllowed.status).toBe(405);
    expect(notAllowed.headers.get('allow')).toBe('POST');
    expect(notAllowed.body).toEqual({ message: expect.stringContaining('stateless') });
  }
});
