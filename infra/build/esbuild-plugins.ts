import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Plugin } from 'esbuild';
import { replaceOnce } from '#shared/source-patch.ts';

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

// middy's response streaming (shared/http/handler.ts gives it to the streaming routes, and every
// route's bundle holds it) imports node:stream/web at the top of its module, only to ask whether a
// handler's body that is not a Node stream is a web ReadableStream. Loading Node's web streams is
// ~6.5 ms of a fresh process's time (measured alone: 6.5–10 ms), paid by every cold start. The
// bundles ask the global ReadableStream instead, which Node loads only when it is first read:
// never for the strings and Node streams the handlers answer with (the check comes after
// `_readableState`). A middy upgrade that moves either line fails the build, not the check.
const WEB_STREAMS_IMPORT = 'import { ReadableStream } from "node:stream/web";';
const WEB_STREAM_CHECK = 'handlerBody instanceof ReadableStream';

/** middy's streaming module with the web streams read only when the check needs them. */
export function lazyWebStreams(source: string): string {
  const why = 'web streams read lazily';
  const withoutImport = replaceOnce(source, WEB_STREAMS_IMPORT, '', '@middy/core', why);
  return replaceOnce(
    withoutImport,
    WEB_STREAM_CHECK,
    'handlerBody instanceof globalThis.ReadableStream',
    '@middy/core',
    why,
  );
}

export const middyLazyWebStreams: Plugin = {
  name: 'middy-lazy-web-streams',
  setup(b) {
    b.onLoad({ filter: /[\\/]@middy[\\/]core[\\/]executionModeStreamifyResponse\.js$/ }, async (args) => ({
      contents: lazyWebStreams(await readFile(args.path, 'utf8')),
      loader: 'js',
    }));
  },
};

// The same cost from the AWS SDK: @smithy/core's web ChecksumStream (for checksumming a web
// ReadableStream body) reads the global ReadableStream at module scope to extend it, which loads
// Node's web streams. A function whose code is split (send-message: its S3 client on first use)
// has that module in a chunk its entry imports at cold start. In Node only the web checksum path
// reaches it, through `ChecksumStream.prototype` alone, when the body is a web stream already; the
// bundles make the class on that first read. Any other shape of the module fails the build.
const WEB_CHECKSUM_STREAM = [
  'const ReadableStreamRef = typeof ReadableStream === "function" ? ReadableStream : function () { };',
  'export class ChecksumStream extends ReadableStreamRef {',
  '}',
].join('\n');
const LAZY_WEB_CHECKSUM_STREAM = [
  'let checksumStreamClass;',
  'export const ChecksumStream = {',
  '  get prototype() {',
  '    checksumStreamClass ??= class ChecksumStream extends (typeof ReadableStream === "function" ? ReadableStream : function () { }) {};',
  '    return checksumStreamClass.prototype;',
  '  },',
  '};',
].join('\n');

/** @smithy/core's web ChecksumStream, its class made when its prototype is first read. */
export function lazyWebChecksumStream(source: string): string {
  if (source.trim() !== WEB_CHECKSUM_STREAM)
    throw new Error('@smithy/core: ChecksumStream.browser.js is not the module expected (web streams read lazily)');
  return LAZY_WEB_CHECKSUM_STREAM;
}

export const smithyLazyWebChecksumStream: Plugin = {
  name: 'smithy-lazy-web-checksum-stream',
  setup(b) {
    b.onLoad(
      { filter: /[\\/]@smithy[\\/]core[\\/]dist-es[\\/].*[\\/]checksum[\\/]ChecksumStream\.browser\.js$/ },
      async (args) => ({
        contents: lazyWebChecksumStream(await readFile(args.path, 'utf8')),
        loader: 'js',
      }),
    );
  },
};
