import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import {
  createResponseStream,
  installLambdaGlobals,
  isStreamingHandler,
  lambdaContext,
  type StreamSink,
} from './lambda-runtime.ts';

// One instance of one function, in a process of its own (started by function-instances.ts):
// the local counterpart of a Lambda execution environment. It loads the function's bundle once
// (the cold start), then runs one invocation at a time as the parent sends them, forwarding a
// streaming handler's bytes as they are written. Protocol (IPC messages):
//   parent → instance: { type: 'invoke', event, timeoutMs } · { type: 'ack', bytes, gone }
//   instance → parent: { type: 'ready' } · { type: 'content-type', value } · { type: 'chunk', bytes }
//                      · { type: 'end' } · { type: 'done', result } · { type: 'failed', error }

export type HostMessage =
  | { type: 'ready' }
  | { type: 'content-type'; value: string }
  | { type: 'chunk'; bytes: Uint8Array }
  | { type: 'end' }
  | { type: 'done'; result: unknown }
  | { type: 'failed'; error: { name: string; message: string; stack?: string } };
export type ParentMessage =
  | { type: 'invoke'; event: unknown; timeoutMs: number }
  | { type: 'ack'; bytes: number; gone: boolean };

/** Bytes a streaming handler may have in flight to the parent before its writes wait. */
const STREAM_WINDOW_BYTES = 256 * 1024;

const [bundle, functionName, memoryMb] = process.argv.slice(2) as [string, string, string];
const send = (message: HostMessage) => {
  if (process.connected) process.send!(message);
};

let unacked = 0;
let gone = false;
let waiting: (() => void)[] = [];

function parentSink(): StreamSink {
  gone = false;
  unacked = 0;
  return {
    contentType: (value) => send({ type: 'content-type', value }),
    async write(chunk) {
      if (gone) return false;
      unacked += chunk.length;
      send({ type: 'chunk', bytes: chunk });
      while (unacked > STREAM_WINDOW_BYTES && !gone) await new Promise<void>((resolve) => waiting.push(resolve));
      return !gone;
    },
    async end() {
      send({ type: 'end' });
    },
  };
}

async function run(handler: unknown, event: unknown, context: Context): Promise<unknown> {
  if (!isStreamingHandler(handler)) return (handler as (e: unknown, c: Context) => Promise<unknown>)(event, context);
  const stream = createResponseStream(parentSink());
  stream.on('error', () => undefined); // a broken stream fails the handler's own pipeline
  const finished = new Promise((resolve) => stream.once('finish', resolve).once('close', resolve));
  await handler(event, stream, context);
  // The runtime answers when the stream ends, not when the handler returns.
  await finished;
  if (stream.errored) throw stream.errored;
  return undefined;
}

installLambdaGlobals();
let handler: unknown;
try {
  handler = ((await import(pathToFileURL(bundle).href)) as { handler?: unknown }).handler;
  if (typeof handler !== 'function') throw new Error(`${bundle} does not export a handler`);
} catch (err) {
  // Lambda's Runtime.ImportModuleError: the parent fails the invocation that started us.
  console.error(`[${functionName}] cold start failed:`, err);
  process.exit(1);
}

// The runtime that started this instance decides when it ends, as Lambda does: a Ctrl-C, which a
// terminal sends to the whole process group, must not cut an invocation that the stop lets finish.
// Without its runtime (the IPC channel gone) an instance has no one to answer, so it ends.
process.on('SIGINT', () => undefined);
process.on('disconnect', () => process.exit(0));

process.on('message', (message: ParentMessage) => {
  if (message.type === 'ack') {
    unacked -= message.bytes;
    gone ||= message.gone;
    const ready = waiting;
    waiting = [];
    for (const resolve of ready) resolve();
    return;
  }
  const context = lambdaContext(functionName, message.timeoutMs, Number(memoryMb));
  const fail = (err: unknown) => {
    const e = err instanceof Error ? err : new Error(String(err));
    send({ type: 'failed', error: { name: e.name, message: e.message, ...(e.stack && { stack: e.stack }) } });
  };
  run(handler, message.event, context).then((result) => {
    try {
      send({ type: 'done', result });
    } catch (err) {
      fail(err); // a result that cannot be serialized, as Lambda would refuse it
    }
  }, fail);
});
send({ type: 'ready' });
