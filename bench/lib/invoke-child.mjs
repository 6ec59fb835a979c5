// Runs one bundle's handler once in a fresh Node process, as a Lambda instance would (import,
// then one invocation), and prints the process's peak resident memory as JSON: after the import
// and at the end (maxRSS, and VmHWM from /proc where there is one). argv: bundle URL, event JSON.
import { readFileSync } from 'node:fs';

globalThis.awslambda ??= { streamifyResponse: (fn) => fn, HttpResponseStream: { from: (stream) => stream } };
const [bundle, eventJson] = process.argv.slice(2);
const { handler } = await import(bundle);
const afterImportKb = process.resourceUsage().maxRSS;
const deadline = Date.now() + 300_000;
const context = {
  functionName: 'bench',
  awsRequestId: 'bench',
  memoryLimitInMB: '1536',
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
};
const started = performance.now();
const result = await handler(JSON.parse(eventJson), context);
const ms = performance.now() - started;
let vmHwmKb;
try {
  vmHwmKb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
} catch {
  vmHwmKb = undefined;
}
process.stdout.write(
  JSON.stringify({ result: result ?? null, ms, afterImportKb, maxRssKb: process.resourceUsage().maxRSS, vmHwmKb }),
);
