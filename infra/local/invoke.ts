import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError } from '#shared/config.ts';
import { manifestFunctions, pipelineStageList, type ManifestFunction } from '../routes.ts';
import { responseStreamReader, type StreamSink } from './lambda-runtime.ts';
import { signLocalIdToken } from './local-idp.ts';
import { FunctionFailure } from './invoker.ts';
import { DataDirInUseError } from './data-dir-lock.ts';
import { startLocalRuntime, type LocalRuntime } from './runtime.ts';
import { asError } from '#shared/errors.ts';

// `npm run invoke -- <function> <event.json>`: runs one manifest function once, the way Lambda
// would, against the local emulators and the data of `npm start` (DATA_DIR, default .data).
// The result goes to stdout (a streaming function's prelude, then its body as it streams);
// notes (messages the function queued, timing) go to stderr.

const USAGE = `Usage: npm run invoke -- <function> <event.json> [--email you@example.com] [--var NAME=value ...]

  <function>   a name from infra/routes.ts: ${manifestFunctions.map((f) => f.name).join(', ')}
  <event.json> an API Gateway REST (v1) proxy event or an SQS event; see events/

Placeholders in the event file:
  {{ID_TOKEN}}       a local identity-provider ID token for --email (what POST /auth takes)
  {{SERVICE_TOKEN}}  a service JWT for --email (signs in through POST /auth first)
  {{EMAIL}}          the --email value (default dev@example.com)
  {{NAME}}           any --var NAME=value

Environment: DATA_DIR (default .data, shared with npm start, which must not be running on it),
and any setting of shared/config.ts (e.g. LOG_LEVEL=INFO, OPENAI_API_KEY).`;

class UsageError extends Error {}

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string', default: 'dev@example.com' },
      var: { type: 'string', multiple: true, default: [] },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const [name, eventFile, ...rest] = positionals;
  if (!name || !eventFile || rest.length) throw new UsageError(USAGE);
  const fn = manifestFunctions.find((f) => f.name === name);
  if (!fn) throw new UsageError(`No function "${name}" in infra/routes.ts.\n\n${USAGE}`);
  const vars: Record<string, string> = {};
  for (const pair of values.var) {
    const at = pair.indexOf('=');
    if (at < 1) throw new UsageError(`--var takes NAME=value, not "${pair}"`);
    vars[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return { fn, eventFile: resolve(eventFile), email: values.email, vars };
}

/** Fills the event's placeholders; tokens are only minted when the event asks for them. */
async function renderEvent(
  text: string,
  runtime: LocalRuntime,
  dataDir: string,
  email: string,
  vars: Record<string, string>,
) {
  const values: Record<string, string> = { EMAIL: email, ...vars };
  if (text.includes('{{ID_TOKEN}}') || text.includes('{{SERVICE_TOKEN}}'))
    values.ID_TOKEN = await signLocalIdToken(dataDir, { email });
  if (text.includes('{{SERVICE_TOKEN}}')) {
    // Through the real sign-in route, so the user exists and gets its role as usual.
    const res = await fetch(`${runtime.url}/auth`, {
      method: 'POST',
      headers: { authorization: `Bearer ${values.ID_TOKEN}` },
    });
    const body = (await res.json()) as { data?: { token?: string }; message?: string };
    if (!body.data?.token) throw new Error(`Signing in ${email} failed (${res.status}): ${body.message ?? 'no token'}`);
    values.SERVICE_TOKEN = body.data.token;
  }
  const rendered = text.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => {
    const value = values[name];
    if (value === undefined) throw new UsageError(`The event uses ${whole}: pass --var ${name}=...`);
    // Inside a JSON string: escape what JSON would.
    return JSON.stringify(value).slice(1, -1);
  });
  try {
    return JSON.parse(rendered) as Record<string, unknown>;
  } catch (err) {
    throw new UsageError(`The event is not valid JSON: ${asError(err).message}`);
  }
}

/** Where a streaming function's bytes go: the prelude (status, headers) printed first, then the body as it comes. */
function printingSink(out: NodeJS.WritableStream): StreamSink {
  const reader = responseStreamReader(
    (head) => {
      out.write(`HTTP ${head.statusCode} (streaming)\n`);
      for (const [k, v] of Object.entries(head.headers)) out.write(`${k}: ${v}\n`);
      out.write('\n');
    },
    (bytes) => void out.write(bytes),
  );
  return {
    contentType: (type) => reader.contentType(type),
    async write(chunk) {
      await reader.write(chunk);
      return true;
    },
    async end() {
      if (!reader.started) await reader.write(Buffer.alloc(0));
      out.write('\n');
    },
  };
}

function printResult(result: unknown, out: NodeJS.WritableStream): void {
  const http = result as {
    statusCode?: number;
    headers?: Record<string, string>;
    body?: string;
    isBase64Encoded?: boolean;
  };
  if (typeof http?.statusCode === 'number') {
    out.write(`HTTP ${http.statusCode}\n`);
    for (const [k, v] of Object.entries(http.headers ?? {})) out.write(`${k}: ${v}\n`);
    out.write('\n');
    const body = http.isBase64Encoded ? Buffer.from(http.body ?? '', 'base64').toString('utf8') : (http.body ?? '');
    try {
      out.write(`${JSON.stringify(JSON.parse(body), null, 2)}\n`);
    } catch {
      out.write(`${body}\n`);
    }
    return;
  }
  out.write(`${result === undefined ? '(no result)' : JSON.stringify(result, null, 2)}\n`);
}

/**
 * What the function sent to the pipeline queues, looked at without receiving it (fauxqs's
 * inspection): it stays queued in DATA_DIR, and the next `npm start` on the directory processes it.
 */
function printQueued(runtime: LocalRuntime): void {
  for (const stage of pipelineStageList) {
    const queued = runtime.owned?.fauxqs.inspectQueue(stage.queue)?.messages;
    for (const m of [...(queued?.ready ?? []), ...(queued?.delayed ?? [])]) {
      console.error(`queued for ${stage.name} (invoke it with an SQS event carrying this body): ${m.body}`);
    }
  }
}

async function invoke(fn: ManifestFunction, event: Record<string, unknown>, runtime: LocalRuntime): Promise<void> {
  if (fn.kind === 'queue' && Array.isArray(event.Records)) {
    // The handler may check where a record came from: point it at the local queue.
    const queue = (runtime.queues as Record<string, { arn: string } | undefined>)[fn.name];
    for (const record of event.Records as Record<string, unknown>[]) record.eventSourceARN = queue?.arn;
  }
  // In an isolated instance, as npm start runs it: the manifest's memory and timeout apply.
  const result = await runtime.functions.invoke(fn, event, printingSink(process.stdout));
  if (result !== undefined || fn.kind === 'queue') printResult(result, process.stdout);
}

async function main(): Promise<number> {
  const { fn, eventFile, email, vars } = parse(process.argv.slice(2));
  const text = await readFile(eventFile, 'utf8').catch(() => {
    throw new UsageError(`Cannot read the event file ${eventFile}`);
  });
  const dataDir = resolve(process.env.DATA_DIR || '.data');

  const runtime = await startLocalRuntime({ port: 0, dataDir, persist: true, pollers: false, log: false });
  const started = Date.now();
  let code = 0;
  try {
    const event = await renderEvent(text, runtime, dataDir, email, vars);
    await invoke(fn, event, runtime);
  } catch (err) {
    console.error(
      `${fn.name} failed:`,
      err instanceof UsageError || err instanceof FunctionFailure ? err.message : err,
    );
    code = 1;
  } finally {
    console.error(`(${fn.name}: ${Date.now() - started} ms)`);
    printQueued(runtime);
    await runtime.stop();
  }
  return code;
}

try {
  process.exitCode = await main();
} catch (err) {
  if (err instanceof UsageError || err instanceof ConfigError || err instanceof DataDirInUseError)
    console.error(err.message);
  else console.error(err);
  process.exitCode = 1;
}
// Handlers may leave sockets or timers behind (as in Lambda, where the sandbox freezes).
process.exit(process.exitCode);
