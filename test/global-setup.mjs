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
  // The local runtime runs each function from its bundle (infra/local/function-bundles.ts):
  // build any missing or stale ones now, in one esbuild run, rather than in the first test that
  // calls each function.
  const { prebuildBundles, functionHostBundle } = await tsImport('../infra/local/function-bundles.ts', import.meta.url);
  const { manifestFunctions } = await tsImport('../infra/routes.ts', import.meta.url);
  await Promise.all([prebuildBundles(manifestFunctions.map((f) => f.entry)), functionHostBundle()]);
}
