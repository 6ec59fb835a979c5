import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { LAMBDA_RUNTIME } from '../../infra/constructs/service-function.ts';

// One Node major everywhere: the deployed runtime, the esbuild target, and the Node that npm
// scripts run (the `node` devDependency puts its binary first on every script's PATH).

const lambdaMajor = /^nodejs(\d+)\.x$/.exec(LAMBDA_RUNTIME.name)?.[1];
const majorOf = (version: string) => version.replace(/^v/, '').split('.')[0];

test('the tests run on the Lambda runtime’s Node major', () => {
  expect(lambdaMajor).toBeDefined();
  expect(majorOf(process.version)).toBe(lambdaMajor);
});

test('`node -v` inside an npm script prints the Lambda runtime’s major', () => {
  const printed = execFileSync('npm', ['run', '-s', 'node-version'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim();
  expect(majorOf(printed)).toBe(lambdaMajor);
});

test('the bundles target the same major, and the project pins that Node as a devDependency', () => {
  const build = readFileSync(new URL('../../infra/build.ts', import.meta.url), 'utf8');
  expect(build).toContain(`target: 'node${lambdaMajor}'`);
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  expect(majorOf(pkg.devDependencies.node.replace(/^[\^~]/, ''))).toBe(lambdaMajor);
});
