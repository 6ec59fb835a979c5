// X-Ray tracing, on where the stack turns it on (the `tracing` setting sets
// POWERTOOLS_TRACE_ENABLED=true and active tracing on the functions and the API stage). Then
// Powertools Tracer is imported at cold start, before any request, and its HTTP capture turns
// every outgoing call (DynamoDB, S3, SQS, Secrets Manager, the model's API) into a subsegment of
// the invocation's trace. Off (the default), neither it nor the X-Ray SDK under it is read: it
// is a package of its own beside the bundle (infra/build.ts; bench cold-start: the import cost).
export {};
if (process.env.POWERTOOLS_TRACE_ENABLED === 'true') await import('./tracer.ts');
