import { Tracer } from '@aws-lambda-powertools/tracer';
import { SERVICE_NAME } from './service-name.ts';

// Imported only with tracing on (tracing.ts). Creating the tracer patches Node's http and
// https modules and fetch (captureHTTPsRequests), so outgoing calls are traced from now on.
export const tracer = new Tracer({ serviceName: SERVICE_NAME, captureHTTPsRequests: true });
