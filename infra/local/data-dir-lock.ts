import { readFileSync, rmSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Where `npm start` and `npm run token` keep their data unless DATA_DIR says otherwise. */
export const DEFAULT_DATA_DIR = '.data';

// One process at a time owns a DATA_DIR (dynalite's LevelDB allows a single opener). A pid
// file turns a second `npm start` or `npm run invoke` on the same directory into a clear
// message; a lock left by a process that no longer runs is taken over.

export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, 'runtime.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, String(process.pid), { flag: 'wx' });
      // Also released when the process exits without stopping (a second Ctrl-C).
      const onExit = () => {
        try {
          if (readFileSync(file, 'utf8') === String(process.pid)) rmSync(file, { force: true });
        } catch {
          // already gone
        }
      };
      process.once('exit', onExit);
      return async () => {
        process.off('exit', onExit);
        await rm(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(await readFile(file, 'utf8').catch(() => ''));
      if (holder && holder !== process.pid && running(holder)) {
        throw new DataDirInUseError(
          `${dataDir} is in use by another process (pid ${holder}: is \`npm start\` running on it?). ` +
            'Stop it, or choose another DATA_DIR.',
        );
      }
      await rm(file, { force: true }); // stale: its process is gone
    }
  }
  throw new DataDirInUseError(`Could not lock ${dataDir}`);
}
