import type { Tracer } from '@aws-lambda-powertools/tracer';

// X-Ray tracing, on where the stack turns it on (the `tracing` setting sets
// POWERTOOLS_TRACE_ENABLED=true and active tracing on the functions and the API stage). Then
// Powertools Tracer is imported at cold start, before any client exists: AWS SDK clients made
// through `traced` record each call as a subsegment (service, operation, retries), and its
// HTTP capture records fetch calls (the model's API). Off (the default), neither it nor the
// X-Ray SDK under it is read: it is a package of its own beside the bundle (infra/build.ts;
// bench cold-start measures the import cost).
const tracer: Tracer | undefined =
  process.env.POWERTOOLS_TRACE_ENABLED === 'true' ? (await import('./powertools-tracer.ts')).tracer : undefined;

/** The client, its calls traced when tracing is on (an AWS SDK v3 client). */
export function traced<T>(client: T): T {
  return tracer ? tracer.captureAWSv3Client(client) : client;
}
