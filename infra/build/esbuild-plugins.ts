import { join } from 'node:path';
import type { Plugin } from 'esbuild';

// What infra/build.ts changes in esbuild's output beyond its options: the banner every bundle
// starts with, and the plugins that keep out code a Lambda never runs.

// ESM output with CommonJS dependencies inside: give them `require` (Node built-ins mostly).
export const BANNER = [
  "import { createRequire as __bundleCreateRequire } from 'node:module';",
  'const require = __bundleCreateRequire(import.meta.url);',
].join('\n');

// zod 4 (classic and mini) re-exports every locale through the `z` namespace, which esbuild cannot tree-shake
// once `z` is imported as an object: ~300 KB of error messages in 60 languages per bundle.
// We only ever use English (shared/zod.ts configures it for zod/mini), so the bundles get just that one.
export const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]zod[\\/]v4[\\/](classic[\\/]external|mini[\\/]external|core[\\/]index)\.js$/.test(args.importer))
        return undefined;
      return { path: join(args.resolveDir, '../locales/index.js'), namespace: 'zod-locales' };
    });
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: join(args.path, '..'),
      loader: 'js',
    }));
  },
};

// In Lambda the execution role's credentials are always in the environment. The SDK's default
// chain would also bundle SSO, INI files, web identity, process and container/instance
// metadata providers (~90 kB of every bundle) that can never apply there; the bundles get the
// environment provider alone. (Unbundled code under npm start and tests keeps the full chain.)
export const lambdaCredentialsOnly: Plugin = {
  name: 'lambda-credentials-only',
  setup(b) {
    b.onResolve({ filter: /^@aws-sdk\/credential-provider-node$/ }, (args) => ({
      path: args.path,
      namespace: 'lambda-credentials',
      pluginData: { resolveDir: args.resolveDir },
    }));
    b.onLoad({ filter: /.*/, namespace: 'lambda-credentials' }, (args) => ({
      contents: [
        "import { fromEnv } from '@aws-sdk/credential-provider-env';",
        'export const defaultProvider = (init = {}) => fromEnv(init);',
        'export const credentialsWillNeedRefresh = (c) => c?.expiration !== undefined;',
        'export const credentialsTreatedAsExpired = (c) => c?.expiration !== undefined && c.expiration.getTime() - Date.now() < 300000;',
      ].join('\n'),
      resolveDir: (args.pluginData as { resolveDir: string }).resolveDir,
      loader: 'js',
    }));
  },
};

// Tracing (shared/observability/tracing.ts) imports Powertools Tracer and the X-Ray SDK only when it is on.
// Rather than a chunk (which would make every function a code-split build), the tracer is a
// bundle of its own, shipped in each function's node_modules as a package the bundle imports
// by name: resolved the same from index.mjs and from any chunk, read only when imported.
export const TRACER_PACKAGE = 'chat-service-tracer';
export const TRACER_SOURCE = 'shared/observability/powertools-tracer.ts';
export const tracerApart: Plugin = {
  name: 'tracer-apart',
  setup(b) {
    b.onResolve({ filter: /^\.\/powertools-tracer\.ts$/ }, (args) =>
      args.importer.endsWith(join('shared', 'observability', 'tracing.ts'))
        ? { path: TRACER_PACKAGE, external: true }
        : undefined,
    );
  },
};
