import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../../infra/local/runtime.ts';
import { PER_USER_LIMITS_OFF } from './app.ts';

// `npm start` as a child process (what a developer runs), for tests of restarts, side-by-side
// copies and clean shutdown. PORT=0 picks a free port; the base URL is read from its output.

export interface ServerProcess {
  url: string;
  output: () => string;
  /** Ctrl-C; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, [join(projectRoot, 'node_modules/tsx/dist/cli.mjs'), 'infra/local/start.ts'], {
    cwd: projectRoot,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'SILENT', ...PER_USER_LIMITS_OFF, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 30_000);
    const check = () => {
      const m = /API:\s+(http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`server exited:\n${out}`));
    });
  });
  return {
    url,
    output: () => out,
    async stop() {
      child.kill('SIGINT');
      return exited;
    },
  };
}
