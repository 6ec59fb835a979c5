import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectRoot } from '../../infra/local/runtime.ts';

// Where the figures of a run are kept (bench/results/, `npm run bench` and `npm run eval`) and
// the commit they were measured on, so a later run can be compared with the code it ran.

/** The checked-out commit's short hash; undefined outside a git checkout. */
export function gitCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: projectRoot, encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/** Writes `text` to bench/results/<name> (making the folder); the file's path. */
export async function writeResult(name: string, text: string): Promise<string> {
  const dir = join(projectRoot, 'bench/results');
  await mkdir(dir, { recursive: true });
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}
