import { Writable } from 'node:stream';
import type { Context } from 'aws-lambda';
import { createId } from '@paralleldrive/cuid2';

// What the Lambda Node.js runtime provides to response-streaming handlers, for running them
// outside Lambda: the `awslambda` global with streamifyResponse and HttpResponseStream. The
// stream format is the runtime's own: a JSON prelude (status, headers), eight NUL bytes, then
// the body, so the gateway parses exactly what API Gateway would receive.

export const STREAMING = Symbol.for('local.lambda.streaming');
export const HTTP_INTEGRATION_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';
export const PRELUDE_DELIMITER = Buffer.alloc(8, 0);

export interface ResponseStream extends Writable {
  setContentType(type: string): void;
}

type StreamingHandler = (event: unknown, stream: ResponseStream, context: Context) => Promise<void>;

export function installLambdaGlobals(): void {
  const g = globalThis as { awslambda?: { streamifyResponse?: unknown } };
  if (typeof g.awslambda?.streamifyResponse === 'function') return;
  // Some hosts (jest's environment) pre-define an empty `awslambda`; fill it in place.
  g.awslambda = Object.assign(g.awslambda ?? {}, {
    streamifyResponse(fn: StreamingHandler) {
      return Object.assign(fn, { [STREAMING]: true });
    },
    HttpResponseStream: {
      from(stream: ResponseStream, prelude: { statusCode?: number; headers?: Record<string, string>; cookies?: string[] }) {
        stream.setContentType(HTTP_INTEGRATION_CONTENT_TYPE);
        stream.write(Buffer.from(JSON.stringify(prelude)));
        stream.write(PRELUDE_DELIMITER);
        return stream;
      },
    },
  });
}

export function isStreamingHandler(fn: unknown): fn is StreamingHandler {
  return typeof fn === 'function' && (fn as unknown as Record<symbol, unknown>)[STREAMING] === true;
}

export function lambdaContext(functionName: string, timeoutMs: number, memoryMb = 1024): Context {
  const deadline = Date.now() + timeoutMs;
  const awsRequestId = createId();
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: String(memoryMb),
    awsRequestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
