// The configuration of this cold start (shared/config/core.ts): what the service's code imports.
// The settings are declared in pieces, one per concern, in shared/config/.
export { config, ConfigError, type Config } from './config/core.ts';
