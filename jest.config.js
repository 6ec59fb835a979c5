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
  // At the end jest tells each worker to exit and force-kills any it has not seen exit within this
  // time (500 ms by default), printing "A worker process has failed to exit gracefully". Measured
  // on a loaded machine: the workers exit within 1 ms of being told, holding nothing but their stdio
  // pipes; it is the parent, busy with its reporters, that notices the exit late. A longer wait
  // keeps that false alarm out of the output; a worker that really hangs is still killed.
  workerGracefulExitTimeout: 10_000,
};
