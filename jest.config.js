// Jest in ESM mode (middy, jose and pdfjs-dist are ESM-only); TypeScript is stripped by esbuild.
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': '<rootDir>/test/esbuild-transform.cjs' },
  globalSetup: '<rootDir>/test/global-setup.mjs',
  globalTeardown: '<rootDir>/test/global-teardown.mjs',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testTimeout: 60_000,
  maxWorkers: 2,
  // A hung handle fails the run instead of keeping CI waiting.
  forceExit: false,
  openHandlesTimeout: 5_000,
};
