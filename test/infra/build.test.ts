import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { ensureTable, LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import {
  buildFunctions,
  CHUNKS_DIR,
  EXTRACT_CHILD,
  MissingEntryError,
  overBudgetReport,
  projectRoot,
  sizeTable,
  STANDARD_FONTS_DIR,
  TRACER_PACKAGE,
  type BuiltFunction,
} from '#infra/build.ts';
import { hostilePdf } from '#test/helpers/hostile-pdfs.ts';
import { createServiceApp } from '#infra/app.ts';
import { manifestFunctions, type ManifestFunction } from '#infra/routes.ts';
import { probeFunction } from '#test/helpers/bundle-probe.ts';
import { startBedrockTestServer } from '#test/helpers/bedrock-server.ts';
import { ARABIC_LIGATURE_PAGES, makeArabicPdf } from '#test/helpers/make-script-pdfs.ts';

// The real bundles: built once into a temporary directory exactly as `npm run build` builds
// them, loaded by a plain Node process (as Lambda would), and synthesized into the stack.

const run = promisify(execFile);

let outDir: string;
let built: BuiltFunction[];

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'bundles-'));
  built = await buildFunctions({ outDir });
}, 180_000);
afterAll(() => rm(outDir, { recursive: true, force: true }));

/** Runs a module script in a fresh Node process with only what a deployed function would get. */
async function node(script: string, env: Record<string, string>, cwd = outDir): Promise<string> {
  const { stdout } = await run(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], {
    cwd,
    env: { PATH: process.env.PATH, AWS_REGION: 'us-east-1', LOG_LEVEL: 'SILENT', ...env },
    timeout: 60_000,
  });
  return stdout;
}

// What the Lambda runtime provides to streaming handlers (installed before a bundle loads).
const LAMBDA_GLOBALS = `globalThis.awslambda = { streamifyResponse: (fn) => fn, HttpResponseStream: { from: (s) => s } };`;
const FUNCTION_ENV = {
  TABLE_NAME: 'table',
  BUCKET_NAME: 'bucket',
  IDP_PRESET: 'google',
  GOOGLE_CLIENT_ID: 'client-id',
  SERVICE_JWT_SECRET: 'a-test-secret-that-is-long-enough-for-hs256',
  PDF_FETCH_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/pdf-fetch',
  PDF_EXTRACT_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/pdf-extract',
  PDF_EMBED_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/pdf-embed',
};

test('every manifest function has one minified ESM bundle with a linked source map, within its size budget', async () => {
  expect(built.map((b) => b.name)).toEqual(manifestFunctions.map((f) => f.name));
  for (const b of built) {
    const code = await readFile(join(b.dir, 'index.mjs'), 'utf8');
    expect(code.startsWith("import { createRequire as __bundleCreateRequire } from 'node:module';")).toBe(true);
    expect(code.trimEnd().endsWith('//# sourceMappingURL=index.mjs.map')).toBe(true);
    // Minified: hardly an indented line (unminified code indents most of its lines; data kept in
    // multi-line strings, as the tokenizer's, does not, nor the code ajv, the MCP SDK's schema
    // validator, generates from multi-line templates: a dozen lines).
    const lines = code.split('\n');
    expect(lines.filter((l) => /^\s{2,}\S/.test(l)).length).toBeLessThan(Math.max(20, lines.length * 0.05));
    const map = JSON.parse(await readFile(join(b.dir, 'index.mjs.map'), 'utf8')) as { sources: string[] };
    expect(map.sources.some((s) => s.endsWith(manifestFunctions.find((f) => f.name === b.name)!.entry))).toBe(true);
    expect([b.name, b.bytes <= b.budgetBytes]).toEqual([b.name, true]);
  }
  // The AWS SDK travels inside the bundle, never imported from the runtime.
  const signIn = await readFile(join(outDir, 'sign-in', 'index.mjs'), 'utf8');
  expect(signIn).not.toMatch(/from\s*["']@aws-sdk\//);
});

test('the size table puts each budget beside what it bounds, with a verdict; over budget says so and names the packages', () => {
  const table = sizeTable(built, outDir).split('\n');
  expect(table[0]).toMatch(/^function\s+kind\s+at start\s+budget\s+within budget\s+map\s+asset \(no budget\)$/);
  for (const b of built) {
    const row = table.find((line) => line.startsWith(`${b.name} `))!;
    expect(row).toMatch(new RegExp(`\\d kB\\s+${b.budgetBytes / 1_000_000} MB\\s+ok \\(\\d+ %\\)`));
  }
  expect(table.at(-1)).toMatch(/all within budget$/);
  expect(overBudgetReport(built)).toBeUndefined();

  const overweight = { ...built[0]!, budgetBytes: Math.floor(built[0]!.bytes / 2) };
  expect(sizeTable([overweight], outDir)).toMatch(/OVER BUDGET[\s\S]*1 over budget$/);
  expect(overBudgetReport([overweight])).toContain(
    `${overweight.name}: ${(overweight.bytes / 1000).toFixed(1)} kB read at start is over its`,
  );
});

test('functions that bundle pdfjs (pdf-extract at least) get standard_fonts/ beside the bundle', async () => {
  const withPdfjs = built.filter((b) => b.pdfjs).map((b) => b.name);
  expect(withPdfjs).toContain('pdf-extract');
  const fonts = (await readdir(join(projectRoot, 'node_modules/pdfjs-dist/standard_fonts'))).sort();
  expect(fonts.length).toBeGreaterThan(5);
  for (const name of withPdfjs) expect((await readdir(join(outDir, name, STANDARD_FONTS_DIR))).sort()).toEqual(fonts);
  for (const b of built.filter((x) => !x.pdfjs)) expect(existsSync(join(b.dir, STANDARD_FONTS_DIR))).toBe(false);
});

test('every bundle loads in a plain Node process and exports a handler; the sign-in bundle answers 401 without a token', async () => {
  const script = `${LAMBDA_GLOBALS}
    const names = ${JSON.stringify(built.map((b) => b.name))};
    const out = {};
    for (const name of names) out[name] = typeof (await import('./' + name + '/index.mjs')).handler;
    const { handler } = await import('./sign-in/index.mjs');
    const res = await handler({ httpMethod: 'POST', path: '/v1/auth', resource: '/v1/auth', headers: {}, body: null,
      requestContext: { requestId: 'bundle-test', stage: 'api' } }, { getRemainingTimeInMillis: () => 5000, awsRequestId: 'x' });
    console.log(JSON.stringify({ out, res }));`;
  const { out, res } = JSON.parse(await node(script, FUNCTION_ENV)) as { out: Record<string, string>; res: any };
  expect(out).toEqual(Object.fromEntries(built.map((b) => [b.name, 'function'])));
  expect(res.statusCode).toBe(401);
  expect(JSON.parse(res.body)).toEqual({ success: false, statusCode: 401, message: 'Missing Authorization header' });
  expect(res.headers['x-request-id']).toBe('bundle-test');
});

test('a bundle reaches DynamoDB with the credentials Lambda puts in the environment (list-products: 200 [])', async () => {
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT!;
  const table = `bundle-${randomBytes(4).toString('hex')}`;
  await ensureTable(endpoint, table);
  const db = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const userId = 'u'.padEnd(24, '0');
  const now = new Date().toISOString();
  await db.send(
    new PutItemCommand({
      TableName: table,
      Item: {
        PK: { S: `USER#${userId}` },
        SK: { S: 'PROFILE' },
        id: { S: userId },
        email: { S: 'bundle@example.com' },
        role: { S: 'user' },
        createdAt: { S: now },
        updatedAt: { S: now },
      },
    }),
  );
  db.destroy();
  const token = await new SignJWT({ role: 'user' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(userId)
    .setIssuer('chat-orders-pdf-service')
    .setAudience('chat-orders-pdf-service-api')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(FUNCTION_ENV.SERVICE_JWT_SECRET));

  const script = `${LAMBDA_GLOBALS}
    const { handler } = await import('./list-products/index.mjs');
    const call = (query) => handler({ httpMethod: 'GET', path: '/v1/products', resource: '/v1/products', body: null,
      queryStringParameters: query, headers: { authorization: 'Bearer ${token}' }, requestContext: { requestId: 'r', stage: 'api' } },
      { getRemainingTimeInMillis: () => 5000, awsRequestId: 'x' });
    console.log(JSON.stringify([await call(null), await call({ limit: '0' })]));`;
  const env = {
    ...FUNCTION_ENV,
    TABLE_NAME: table,
    DYNAMODB_ENDPOINT: endpoint,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  };
  const [ok, invalid] = JSON.parse(await node(script, env));
  expect([ok.statusCode, ok.body]).toEqual([200, '[]']);
  // zod's English messages survive the build (only the other locales are left out).
  expect(invalid.statusCode).toBe(400);
  expect(JSON.stringify(JSON.parse(invalid.body))).toMatch(/limit.*(too small|>=\s*1)/i);
});

test('pdfjs-dist works inside a bundle: text per page, fonts read from beside the bundle', async () => {
  const probe = probeFunction('pdf-probe', 'queue', { timeoutSeconds: 60, memoryMb: 512 });
  const [b] = await buildFunctions({ outDir, functions: [probe] });
  expect(b!.pdfjs).toBe(true);

  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage().drawText('First page of the bundled test.', { x: 50, y: 700, font, size: 14 });
  doc.addPage().drawText('Second page, still readable.', { x: 50, y: 700, font, size: 14 });
  const pdfPath = join(outDir, 'probe.pdf');
  await writeFile(pdfPath, await doc.save());

  // Run from a directory with no node_modules: nothing can come from the project's packages.
  const script = `${LAMBDA_GLOBALS}
    const { handler } = await import(${JSON.stringify(join(b!.dir, 'index.mjs'))});
    console.log(JSON.stringify(await handler({ pdfPath: ${JSON.stringify(pdfPath)} })));`;
  const result = JSON.parse(await node(script, {}, tmpdir()));
  expect(result).toMatchObject({ pages: 2, textPages: 2, failedPages: 0 });
  expect(result.texts).toEqual(['First page of the bundled test.', 'Second page, still readable.']);
  expect(result.fontsDir).toBe(`${join(b!.dir, STANDARD_FONTS_DIR)}/`);
  // pdf.js ran in the extraction child shipped beside the bundle, not in the bundle itself.
  expect(existsSync(join(b!.dir, `${EXTRACT_CHILD}.mjs`))).toBe(true);
  expect(b!.childBytes).toBeGreaterThan(1_000_000);
  expect(readFileSync(join(b!.dir, 'index.mjs'), 'utf8')).not.toContain('WorkerMessageHandler');

  // The child carries the patched pdf.js worker: ligatures mapped to two letters keep their order.
  const ligaturesPath = join(outDir, 'ligatures.pdf');
  await writeFile(ligaturesPath, makeArabicPdf(ARABIC_LIGATURE_PAGES, 'letters'));
  const ligaturesScript = `${LAMBDA_GLOBALS}
    const { handler } = await import(${JSON.stringify(join(b!.dir, 'index.mjs'))});
    console.log(JSON.stringify(await handler({ pdfPath: ${JSON.stringify(ligaturesPath)} })));`;
  expect(JSON.parse(await node(ligaturesScript, {}, tmpdir())).texts).toEqual(ARABIC_LIGATURE_PAGES);

  // A hostile document fails typed inside the bundle too, and the bundle's process survives it.
  const bombPath = join(outDir, 'bomb.pdf');
  await writeFile(bombPath, await hostilePdf('cmap-8-ranges'));
  const bombScript = `${LAMBDA_GLOBALS}
    const { handler } = await import(${JSON.stringify(join(b!.dir, 'index.mjs'))});
    console.log(JSON.stringify([await handler({ pdfPath: ${JSON.stringify(bombPath)} }), await handler({ pdfPath: ${JSON.stringify(pdfPath)} })]));`;
  const [bomb, after] = JSON.parse(await node(bombScript, {}, tmpdir()));
  expect(bomb).toEqual({ failed: 'TOO_COMPLEX', message: expect.stringMatching(/CMaps map more than/) });
  expect(after).toMatchObject({ pages: 2, textPages: 2 });
});

test('AI_PROVIDER=bedrock works inside a bundle: ConverseStream frames decoded, credentials from the environment, signed requests', async () => {
  const probe = probeFunction('ai-probe', 'http', { timeoutSeconds: 29, memoryMb: 1024 });
  const [b] = await buildFunctions({ outDir, functions: [probe] });
  const bedrock = await startBedrockTestServer();
  try {
    bedrock.setReply('Bundled Bedrock reply.');
    const script = `${LAMBDA_GLOBALS}
      const { handler } = await import(${JSON.stringify(join(b!.dir, 'index.mjs'))});
      console.log(JSON.stringify(await handler({ prompt: 'hello from the bundle' })));`;
    const env = {
      ...FUNCTION_ENV,
      AI_PROVIDER: 'bedrock',
      BEDROCK_ENDPOINT: bedrock.url,
      BEDROCK_EMBEDDING_DIMENSIONS: '256',
      AWS_ACCESS_KEY_ID: 'AKIDBUNDLE',
      AWS_SECRET_ACCESS_KEY: 'bundle-secret',
      AWS_SESSION_TOKEN: 'bundle-session',
    };
    const result = JSON.parse(await node(script, env, tmpdir()));
    expect(result.name).toBe('bedrock');
    expect(
      result.parts
        .filter((p: any) => p.type === 'delta')
        .map((p: any) => p.text)
        .join(''),
    ).toBe('Bundled Bedrock reply.');
    expect(result.parts.at(-1)).toMatchObject({ type: 'usage', usage: { completionTokens: 3 } });
    expect(result.dimensions).toBe(256);
    expect(bedrock.requests.map((r) => r.operation)).toEqual(['converse-stream', 'invoke']);
    expect(String(bedrock.requests[0]!.headers.authorization)).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDBUNDLE\/\d{8}\/us-east-1\/bedrock\//,
    );
    expect(bedrock.requests[0]!.headers['x-amz-security-token']).toBe('bundle-session');
  } finally {
    await bedrock.close();
  }
});

test("each AI provider is a chunk beside send-message's bundle: a cold start reads the chosen one only", async () => {
  const b = built.find((f) => f.name === 'send-message')!;
  const chunks = await readdir(join(b.dir, CHUNKS_DIR));
  for (const provider of ['openai-provider', 'bedrock-provider', 'offline-provider'])
    expect(chunks.some((c) => c.startsWith(`${provider}-`))).toBe(true);
  expect(await readFile(join(b.dir, 'index.mjs'), 'utf8')).not.toContain('api.openai.com'); // the OpenAI SDK's default base URL

  // The provider chunks a fresh process reads while importing the bundle (its cold start).
  const providersRead = async (env: Record<string, string>) => {
    const out = await node(
      `${LAMBDA_GLOBALS}
      import { registerHooks } from 'node:module';
      const read = [];
      registerHooks({ load(url, context, next) { read.push(url.split('/').pop()); return next(url, context); } });
      await import(${JSON.stringify(join(b.dir, 'index.mjs'))});
      console.log(JSON.stringify(read));`,
      { ...FUNCTION_ENV, ...env },
      tmpdir(),
    );
    return (JSON.parse(out) as string[])
      .filter((f) => f.includes('-provider-'))
      .map((f) => f.replace(/-[A-Z0-9]+\.mjs$/, ''));
  };
  expect(await providersRead({ AI_PROVIDER: 'offline' })).toEqual(['offline-provider']);
  expect(await providersRead({ AI_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-test-not-used' })).toEqual([
    'openai-provider',
  ]);
  expect(await providersRead({ AI_PROVIDER: 'bedrock' })).toEqual(['bedrock-provider']);
});

test("the MCP server's cold start reads no S3 client: its tools that read stored files import it on first use", async () => {
  const b = built.find((f) => f.name === 'mcp')!;
  // The source of every file a fresh process reads while importing the bundle.
  const out = await node(
    `${LAMBDA_GLOBALS}
    import { registerHooks } from 'node:module';
    import { readFileSync } from 'node:fs';
    import { fileURLToPath } from 'node:url';
    const read = [];
    registerHooks({ load(url, context, next) { if (url.startsWith('file:')) read.push(fileURLToPath(url)); return next(url, context); } });
    await import(${JSON.stringify(join(b.dir, 'index.mjs'))});
    console.log(JSON.stringify(read.map((f) => readFileSync(f, 'utf8').includes('GetObjectCommand'))));`,
    FUNCTION_ENV,
    tmpdir(),
  );
  const readAtStart = JSON.parse(out) as boolean[];
  expect(readAtStart.length).toBeGreaterThan(0);
  expect(readAtStart.filter(Boolean)).toEqual([]);
  // The S3 client is still in the function, among the chunks read later.
  const chunks = await readdir(join(b.dir, CHUNKS_DIR));
  const sources = await Promise.all(chunks.map((c) => readFile(join(b.dir, CHUNKS_DIR, c), 'utf8')));
  expect(sources.some((source) => source.includes('GetObjectCommand'))).toBe(true);
});

test("no cold start loads Node's web streams (middy's streaming, the SDK's web ChecksumStream); both still work on a web stream", async () => {
  // A plain route, a streaming one, and one whose code is split (its S3 client on first use).
  for (const name of ['get-me', 'follow-reply', 'send-message']) {
    const b = built.find((f) => f.name === name)!;
    const out = await node(
      `${LAMBDA_GLOBALS}
      await import(${JSON.stringify(join(b.dir, 'index.mjs'))});
      console.log(JSON.stringify(process.moduleLoadList.filter((m) => m.includes('webstreams') || m.includes('stream/web'))));`,
      FUNCTION_ENV,
      tmpdir(),
    );
    expect({ name, loaded: JSON.parse(out) }).toEqual({ name, loaded: [] });
  }
  // The check a web ReadableStream body meets reads the global class, the one node:stream/web exports.
  const { lazyWebStreams } = await import('#infra/build/esbuild-plugins.ts');
  const source = await readFile(
    join(projectRoot, 'node_modules/@middy/core/executionModeStreamifyResponse.js'),
    'utf8',
  );
  const patched = lazyWebStreams(source);
  expect(patched).not.toContain('node:stream/web');
  expect(patched).toContain('handlerBody instanceof globalThis.ReadableStream');
  expect(globalThis.ReadableStream).toBe((await import('node:stream/web')).ReadableStream);
  // The web ChecksumStream's class, made on the first read of its prototype, extends ReadableStream
  // as the SDK's does: the stream its web path returns is a ReadableStream and a ChecksumStream.
  const { lazyWebChecksumStream } = await import('#infra/build/esbuild-plugins.ts');
  const checksumSource = await readFile(
    join(
      projectRoot,
      'node_modules/@smithy/core/dist-es/submodules/serde/util-stream/checksum/ChecksumStream.browser.js',
    ),
    'utf8',
  );
  const lazy = lazyWebChecksumStream(checksumSource);
  // The module's one export, evaluated as a function body.
  const ChecksumStream = new Function(`${lazy.replace('export const', 'const')}\nreturn ChecksumStream;`)();
  const readable = new TransformStream().readable;
  Object.setPrototypeOf(readable, ChecksumStream.prototype);
  expect(readable).toBeInstanceOf(ReadableStream);
  expect(Object.getPrototypeOf(ChecksumStream.prototype)).toBe(ReadableStream.prototype);
  expect(ChecksumStream.prototype).toBe(ChecksumStream.prototype); // one class, made once
});

test('the tracer is a package beside every bundle, read at cold start only with tracing on; on, it traces outgoing HTTP', async () => {
  for (const b of built) {
    expect([b.name, b.nodeModules.includes(TRACER_PACKAGE)]).toEqual([b.name, true]);
    expect([b.name, (await readFile(join(b.dir, 'index.mjs'), 'utf8')).includes('aws-xray-sdk')]).toEqual([
      b.name,
      false,
    ]);
  }
  const b = built.find((f) => f.name === 'list-chats')!;
  // What a fresh process reads while importing the bundle, and whether http.request was wrapped.
  const coldStart = async (env: Record<string, string>) => {
    const out = await node(
      `${LAMBDA_GLOBALS}
      import { registerHooks } from 'node:module';
      import http from 'node:http';
      const read = [];
      registerHooks({ load(url, context, next) { read.push(url); return next(url, context); } });
      const request = http.request;
      await import(${JSON.stringify(join(b.dir, 'index.mjs'))});
      console.log(JSON.stringify({ tracerRead: read.some((u) => u.includes('/node_modules/${TRACER_PACKAGE}/')), httpWrapped: http.request !== request }));`,
      { ...FUNCTION_ENV, ...env },
      tmpdir(),
    );
    return JSON.parse(out) as { tracerRead: boolean; httpWrapped: boolean };
  };
  expect(await coldStart({})).toEqual({ tracerRead: false, httpWrapped: false });
  // As Lambda runs a function with active tracing (Powertools traces only inside Lambda).
  const lambda = {
    AWS_LAMBDA_FUNCTION_NAME: 'list-chats',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1',
  };
  expect(await coldStart({ ...lambda, POWERTOOLS_TRACE_ENABLED: 'true' })).toEqual({
    tracerRead: true,
    httpWrapped: true,
  });
});

test('a manifest entry whose file is missing fails the build with a message naming it', async () => {
  const ghost: ManifestFunction = {
    name: 'ghost',
    entry: 'functions/ghost-route.ts',
    kind: 'http',
    timeoutSeconds: 29,
    memoryMb: 1024,
    access: {},
  };
  const attempt = buildFunctions({ outDir, functions: [ghost] });
  await expect(attempt).rejects.toBeInstanceOf(MissingEntryError);
  await expect(buildFunctions({ outDir, functions: [ghost] })).rejects.toThrow('ghost → functions/ghost-route.ts');
});

test('the app synthesizes from the real bundles: each function runs the asset of its own bundle', async () => {
  const cdkOut = join(outDir, 'cdk.out');
  const { apiFunctions, workers } = createServiceApp({
    app: new App({
      outdir: cdkOut,
      context: {
        IDP_PRESET: 'firebase',
        FIREBASE_PROJECT_ID: 'my-project',
        CORS_ALLOW_ORIGIN: 'https://app.example.com',
      },
    }),
    distDir: outDir,
    env: {},
  });
  const functions = [apiFunctions, workers]
    .flatMap((stack) => Object.values(Template.fromStack(stack).toJSON().Resources as Record<string, any>))
    .filter((r) => r.Type === 'AWS::Lambda::Function');
  expect(functions).toHaveLength(manifestFunctions.length);
  for (const fn of functions) expect(fn.Properties.Code.S3Key).toMatch(/^[0-9a-f]{64}\.zip$/);

  // The staged assets are the bundles (what `cdk deploy` uploads and `sam local invoke` runs).
  const staged = (await readdir(cdkOut)).filter((d) => d.startsWith('asset.'));
  const names = await Promise.all(staged.map(async (d) => (await readdir(join(cdkOut, d))).sort().join(',')));
  // (index.mjs.LEGAL.txt only where index.mjs itself holds licensed code: with code splitting it may all be in chunks/.)
  expect(
    names.filter((n) => n.split(',').includes('index.mjs') && n.split(',').includes('index.mjs.map')),
  ).toHaveLength(manifestFunctions.length);
}, 300_000); // a synth of every stack: minutes on a loaded two-core machine
