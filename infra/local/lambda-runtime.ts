import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Context } from 'aws-lambda';

// What the Lambda Node.js runtime provides to response-streaming handlers, for running them
// outside Lambda: the `awslambda` global with streamifyResponse and HttpResponseStream, and the
// response stream itself. Both follow the real runtime (aws-lambda-ric): handlers
// are marked with `Symbol.for('aws.lambda.runtime.handler.streaming')`, the content type can be
// set until the first write, and HttpResponseStream.from writes its prelude (status, headers as
// JSON, then eight NUL bytes) on the first write, not when it is called. The gateway parses that
// byte stream exactly as API Gateway would receive it.

const STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');
const HTTP_INTEGRATION_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';
const PRELUDE_DELIMITER = Buffer.alloc(8, 0);
const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

export interface ResponseStream extends Writable {
  setContentType(type: string): void;
  /** Set by HttpResponseStream.from: writes the prelude before the first chunk (the runtime's hook). */
  _onBeforeFirstWrite?: (write: (chunk: string | Uint8Array) => void) => void;
}

type StreamingHandler = (event: unknown, stream: ResponseStream, context: Context) => Promise<void>;

export function installLambdaGlobals(): void {
  const g = globalThis as { awslambda?: { streamifyResponse?: unknown } };
  if (typeof g.awslambda?.streamifyResponse === 'function') return;
  // Some hosts (jest's environment) pre-define an empty `awslambda`; fill it in place.
  g.awslambda = Object.assign(g.awslambda ?? {}, {
    streamifyResponse(fn: StreamingHandler) {
      return Object.assign(fn, { [STREAMING]: 'response' });
    },
    HttpResponseStream: {
      from(
        stream: ResponseStream,
        prelude: { statusCode?: number; headers?: Record<string, string>; cookies?: string[] },
      ) {
        stream.setContentType(HTTP_INTEGRATION_CONTENT_TYPE);
        const json = JSON.stringify(prelude);
        stream._onBeforeFirstWrite = (write) => {
          write(json);
          write(PRELUDE_DELIMITER);
        };
        return stream;
      },
    },
  });
}

export function isStreamingHandler(fn: unknown): fn is StreamingHandler {
  return typeof fn === 'function' && (fn as unknown as Record<symbol, unknown>)[STREAMING] === 'response';
}

/** Where a function's response stream goes: the gateway's HTTP response, or the parent of an isolated function. */
export interface StreamSink {
  contentType(type: string): void;
  /** Resolves once the bytes are taken (backpressure); false when the receiver has gone away. */
  write(chunk: Buffer): Promise<boolean>;
  end(): Promise<void>;
}

/** The function's side of a response stream, as the real runtime builds it. */
export function createResponseStream(sink: StreamSink): ResponseStream {
  let started = false;
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      sink.write(Buffer.from(chunk)).then(
        (alive) => callback(alive ? null : new Error('The client went away')),
        (err: Error) => callback(err),
      );
    },
    final(callback) {
      // A stream ended without a single write still owes its prelude (e.g. an empty body).
      const prelude: Buffer[] = [];
      if (!started) {
        started = true;
        stream._onBeforeFirstWrite?.((chunk) => prelude.push(Buffer.from(chunk)));
      }
      (async () => {
        for (const chunk of prelude) await sink.write(chunk);
        await sink.end();
      })().then(() => callback(), callback);
    },
  }) as ResponseStream;
  const rawWrite = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  function writeFirst() {
    started = true;
    stream._onBeforeFirstWrite?.((chunk) => rawWrite(chunk));
  }
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (!started) writeFirst();
    return rawWrite(chunk, ...rest);
  }) as typeof stream.write;
  stream.setContentType = (type: string) => {
    if (started) throw new Error('Cannot set content-type, too late.');
    sink.contentType(type);
  };
  sink.contentType(DEFAULT_CONTENT_TYPE);
  return stream;
}

interface StreamHead {
  statusCode: number;
  headers: Record<string, string>;
  cookies: string[];
}

/**
 * Reads a function's response stream as API Gateway does: with the HTTP integration content type,
 * a JSON prelude up to eight NUL bytes, then the body; any other content type is a 200 body of
 * that type. `onHead` is called once, before the first body bytes.
 */
export function responseStreamReader(
  onHead: (head: StreamHead) => void,
  onBody: (bytes: Buffer) => Promise<void> | void,
) {
  let contentType = DEFAULT_CONTENT_TYPE;
  let pending: Buffer | undefined = Buffer.alloc(0); // bytes before the prelude delimiter
  return {
    contentType(type: string) {
      contentType = type;
    },
    /** Whether the head has been decided (the status and headers can no longer change). */
    get started() {
      return pending === undefined;
    },
    async write(chunk: Buffer): Promise<void> {
      let bytes = chunk;
      if (pending !== undefined) {
        if (contentType !== HTTP_INTEGRATION_CONTENT_TYPE) {
          pending = undefined;
          onHead({ statusCode: 200, headers: { 'content-type': contentType }, cookies: [] });
        } else {
          const all = Buffer.concat([pending, bytes]);
          const at = all.indexOf(PRELUDE_DELIMITER);
          if (at < 0) {
            pending = all;
            return;
          }
          const prelude = JSON.parse(all.subarray(0, at).toString('utf8')) as Partial<StreamHead>;
          pending = undefined;
          onHead({
            statusCode: prelude.statusCode ?? 200,
            headers: prelude.headers ?? {},
            cookies: prelude.cookies ?? [],
          });
          bytes = all.subarray(at + PRELUDE_DELIMITER.length);
        }
      }
      if (bytes.length) await onBody(bytes);
    },
  };
}

export function lambdaContext(functionName: string, timeoutMs: number, memoryMb = 1024): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
