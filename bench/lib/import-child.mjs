// Imports one bundle in a fresh Node process, the way the Lambda runtime loads a handler at
// cold start, and prints how long the import took (module evaluation included) as JSON.
// Streaming functions call `awslambda.streamifyResponse` at module scope: Lambda provides it.
globalThis.awslambda ??= { streamifyResponse: (fn) => fn, HttpResponseStream: { from: (stream) => stream } };
const t0 = performance.now();
const mod = await import(process.argv[2]);
const ms = performance.now() - t0;
if (typeof mod.handler !== 'function') {
  console.error(`${process.argv[2]} exports no handler`);
  process.exit(1);
}
process.stdout.write(JSON.stringify({ ms, rssBytes: process.memoryUsage().rss }));
