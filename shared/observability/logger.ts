import { Logger } from '@aws-lambda-powertools/logger';
import { SERVICE_NAME } from './service-name.ts';

// One structured JSON logger per cold start. The level comes from LOG_LEVEL (read directly so
// that logging works even while the configuration itself is being reported as invalid).
export const logger = new Logger({
  serviceName: SERVICE_NAME,
  logLevel: (process.env.LOG_LEVEL ?? 'INFO').toUpperCase() as 'INFO',
});
