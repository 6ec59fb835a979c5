// One dynalite and one fauxqs for the whole run, on free loopback ports, in memory. Each test
// file gets its own table, queues and bucket (a name prefix), so files can run in parallel.
// (Plain ESM loading the TypeScript module through tsx: jest runs global setup outside its
// ESM transform, and fauxqs is ESM-only.)
import { tsImport } from 'tsx/esm/api';

export default async function globalSetup() {
  const { startEmulators } = await tsImport('../infra/local/emulators.ts', import.meta.url);
  const emulators = await startEmulators();
  process.env.TEST_DYNAMODB_ENDPOINT = emulators.dynamodbEndpoint;
  process.env.TEST_FAUXQS_ENDPOINT = emulators.fauxqsEndpoint;
  globalThis.__emulators = emulators;
}
