// Jest transform: strips TypeScript with esbuild (fast, no type checking; `npm run typecheck` does that).
const { transformSync } = require('esbuild');

module.exports = {
  process(source, filename, options) {
    const { code, map } = transformSync(source, {
      loader: 'ts',
      format: options.supportsStaticESM ? 'esm' : 'cjs',
      target: 'node20',
      sourcemap: 'external',
      sourcefile: filename,
    });
    return { code, map };
  },
};
