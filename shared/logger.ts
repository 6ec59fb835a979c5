import { Logger } from '@aws-lambda-powertools/logger';

// One structured JSON logger per cold start. The level comes from LOG_LEVEL (read directly so
// that logging works even while the configuration itself is being reported as invalid).
export const logger = new Logger({
  serviceName: 'chat-orders-pdf-service',
  logLevel: (process.env.LOG_LEVEL ?? 'INFO').toUpperCase() as 'INFO',
});
