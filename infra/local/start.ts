import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '#shared/config.ts';
import { describeAiProvider } from '#shared/ai/provider.ts';
import { startLocalRuntime } from './runtime.ts';
import { DataDirInUseError, DEFAULT_DATA_DIR } from './data-dir-lock.ts';
import { asError } from '#shared/errors.ts';
import { HOST_NAME } from './request-guard.ts';

// `npm start`: the whole service on this machine. PORT and DATA_DIR choose where; everything
// else is configured like the deployed functions (see the README's configuration table).

/** A value as one shell word (single-quoted unless it is plainly safe). */
const shellQuoted = (value: string) => (/^[\w./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`);

const local = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    DATA_DIR: z.string().min(1).default(DEFAULT_DATA_DIR),
    // Names served besides localhost, 127.0.0.1 and [::1] (a name in /etc/hosts, a LAN address).
    LOCAL_ALLOWED_HOSTS: z
      .string()
      .default('')
      .transform((v) =>
        v
          .split(',')
          .map((name) => name.trim().toLowerCase())
          .filter(Boolean),
      )
      .refine((names) => names.every((name) => HOST_NAME.test(name)), {
        message: 'must be host names without a port, comma-separated (e.g. myhost.test,192.168.1.20)',
      }),
  })
  .safeParse(process.env);
if (!local.success) {
  console.error(
    `Invalid configuration: ${local.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
  );
  process.exit(1);
}
const { PORT, DATA_DIR, LOCAL_ALLOWED_HOSTS } = local.data;

/** How long a stop waits for requests and pipeline batches in flight before it exits anyway. */
const STOP_GRACE_MS = 10_000;
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

// With the terminal gone (SIGHUP), writing to it fails: that must not cut the stop short.
process.stdout.on('error', () => undefined);
process.stderr.on('error', () => undefined);

try {
  const runtime = await startLocalRuntime({
    port: PORT,
    dataDir: resolve(DATA_DIR),
    persist: true,
    extraHostNames: LOCAL_ALLOWED_HOSTS,
    paymentProvider: { dataDir: resolve(DATA_DIR) },
  });
  // Everything acknowledged is already on disk (DynamoDB, queues and objects are written through
  // as they are accepted), so a stop only lets work in flight finish: a second signal, or the
  // grace period running out, ends the process at once without losing anything acknowledged.
  let stopping = false;
  const stopNow = (why: string) => {
    console.log(`${why}: stopping now; work in flight is redelivered at the next start.`);
    process.exit(130);
  };
  const stop = async (why: string) => {
    stopping = true;
    console.log(`\n${why}: stopping (up to ${STOP_GRACE_MS / 1000} s for work in flight; again to stop at once)...`);
    const grace = setTimeout(() => {
      console.log(`Stopped after ${STOP_GRACE_MS / 1000} s; work still in flight is redelivered at the next start.`);
      process.exit(0);
    }, STOP_GRACE_MS);
    // Work cut short by the stop may fail on its way out (a killed function instance, a closed
    // client): it is redelivered at the next start, so such errors are reported, not fatal.
    const report = (err: unknown) => console.error(`while stopping: ${asError(err).message}`);
    process.on('uncaughtException', report);
    process.on('unhandledRejection', report);
    await runtime.stop({ graceMs: STOP_GRACE_MS }).catch(report);
    clearTimeout(grace);
    console.log('Stopped.');
    process.exit(0);
  };
  // Under `npm start` one Ctrl-C arrives twice: the terminal signals the whole foreground process
  // group (npm and this process), and npm passes SIGINT and SIGTERM on to its child again. So
  // "again to stop at once" counts presses, not deliveries: under npm a signal's second copy
  // belongs to the first press (SIGHUP, which npm does not pass on, comes once).
  const copiesPerPress = (signal: string) =>
    process.env.npm_lifecycle_event === 'start' && signal !== 'SIGHUP' ? 2 : 1;
  const received = new Map<string, number>();
  const onSignal = (signal: string) => {
    const count = (received.get(signal) ?? 0) + 1;
    received.set(signal, count);
    if (!stopping) void stop(signal);
    else if (count > copiesPerPress(signal)) stopNow(signal);
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  // `npm start` is npm → node: if npm dies without passing a signal on (it forwards only SIGINT
  // and SIGTERM), this process is reparented; it stops rather than hold DATA_DIR as an orphan.
  const parent = process.ppid;
  setInterval(() => {
    if (!stopping && process.ppid !== parent) void stop('parent process gone');
  }, 500).unref();

  // Printed once the signals are handled: whoever waits for this banner may stop it at once.
  console.log(`API:         ${runtime.url}`);
  console.log(`Playground:  ${new URL('/', runtime.url).href}`);
  console.log(`Reference:   ${new URL('/docs', runtime.url).href}`);
  console.log(`AI provider: ${describeAiProvider(runtime.config)}`);
  console.log(`Data:        ${resolve(DATA_DIR)}`);
  if (runtime.paymentProvider) {
    console.log(
      `Payments:    local stand-in of the provider at ${runtime.paymentProvider.url}; pay an order: npm run pay -- <orderId>`,
    );
  }
  if (runtime.s3Vectors) {
    console.log(`Vectors:     VECTOR_STORE=s3vectors, local stand-in of Amazon S3 Vectors at ${runtime.s3Vectors.url}`);
  }
  // The token command signs with the key in DATA_DIR: the hint names a DATA_DIR other than the default.
  const dataDirPrefix = DATA_DIR === DEFAULT_DATA_DIR ? '' : `DATA_DIR=${shellQuoted(DATA_DIR)} `;
  console.log(`Sign in:     TOKEN=$(${dataDirPrefix}npm run -s token -- --email you@example.com)`);
  console.log(`             curl -XPOST -H "Authorization: Bearer $TOKEN" ${runtime.url}/auth`);
} catch (err) {
  if (err instanceof ConfigError || err instanceof DataDirInUseError) console.error(err.message);
  else if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE')
    console.error(`Port ${PORT} is in use; set PORT to another one.`);
  else console.error(err);
  process.exit(1);
}
