import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { projectRoot } from '#infra/build.ts';
import { parseContextArgs } from '#infra/synth.ts';
import { ConfigError } from '#shared/config.ts';
import { npmCommand } from '#test/helpers/server-process.ts';

// `npm run synth` checks the deployment settings before it builds: with settings missing it
// fails in seconds (not after a half-minute build, once per missing setting), naming every
// problem and how to pass a setting through the npm script.

const run = promisify(execFile);

/** `npm run synth -- <args>` with none of the deployment settings in the environment. */
function npmSynth(args: string[]) {
  const [command, npmArgs] = npmCommand(['run', 'synth', '--', ...args]);
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(IDP_|FIREBASE_|COGNITO_|GOOGLE_|CORS_)/.test(k)),
  );
  return run(command, npmArgs, { cwd: projectRoot, env }).then(
    () => {
      throw new Error('npm run synth succeeded without settings');
    },
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
}

test('with settings missing, npm run synth fails before building, naming each and the npm syntax', async () => {
  const failed = await npmSynth(['-c', 'IDP_PRESET=cognito', '--context', 'logRetentionDays=17']);
  expect(failed.code).toBe(1);
  expect(failed.stdout).not.toMatch(/building|bundles/);
  expect(failed.stderr).toContain('The deployment settings are incomplete (3 problems)');
  expect(failed.stderr).toContain('logRetentionDays: must be one of');
  expect(failed.stderr).toContain('COGNITO_USER_POOL_ID is required for IDP_PRESET=cognito');
  expect(failed.stderr).toContain('CORS_ALLOW_ORIGIN must be set');
  expect(failed.stderr).toContain('npm run synth -- -c IDP_PRESET=firebase -c FIREBASE_PROJECT_ID=my-project');
}, 60_000);

test('context arguments are read as the CDK CLI reads them; anything else is refused with the usage', () => {
  expect(parseContextArgs(['-c', 'A=1', '--context', 'B=x=y', '-c=C=', '--context=D=d'])).toEqual({
    A: '1',
    B: 'x=y',
    C: '',
    D: 'd',
  });
  expect(() => parseContextArgs(['--all'])).toThrow(ConfigError);
  expect(() => parseContextArgs(['-c'])).toThrow(/usage: npm run synth/);
  expect(() => parseContextArgs(['-c', 'novalue'])).toThrow(/Not a context setting: novalue/);
});
