import { spawn, type ChildProcess } from 'node:child_process';
import { projectRoot } from '../../infra/local/runtime.ts';
import { PER_USER_LIMITS_OFF } from './app.ts';

// `npm start` as a child process (what a developer runs), for tests of restarts, side-by-side
// copies, crashes and stopping. PORT=0 picks a free port; the base URL is read from its output.
// By default the command of the `start` script is run directly (node with the tsx loader);
// `viaNpm` runs `npm start` itself, for what npm adds (its own process, signal forwarding).

export interface ServerProcess {
  url: string;
  /** The spawned process: npm with `viaNpm`, else the server itself. */
  pid: number;
  output: () => string;
  /** Resolves with the exit code, or the signal that ended the process. */
  exited: Promise<number | NodeJS.Signals | null>;
  signal(signal: NodeJS.Signals): void;
  /** Ctrl-C; resolves with the exit code. */
  stop(): Promise<number | NodeJS.Signals | null>;
}

export interface ServerProcessOptions {
  viaNpm?: boolean;
  /** Its own process group, so a test can signal the whole group as a terminal does. */
  detached?: boolean;
}

/** npm with `args`, as a command and its arguments: the npm running the tests (npm_execpath under `npm test`), else the one on PATH. */
export function npmCommand(args: string[]): [string, string[]] {
  const npm = process.env.npm_execpath;
  return npm ? [process.execPath, [npm, ...args]] : ['npm', args];
}

export async function startServerProcess(
  env: Record<string, string>,
  o: ServerProcessOptions = {},
): Promise<ServerProcess> {
  const [command, args] = o.viaNpm
    ? npmCommand(['start', '--silent'])
    : [process.execPath, ['--import', 'tsx', 'infra/local/start.ts']];
  const child: ChildProcess = spawn(command, args, {
    cwd: projectRoot,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'SILENT', ...PER_USER_LIMITS_OFF, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: o.detached === true,
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal)),
  );
  const url = await new Promise<string>((resolve, reject) => {
    // Generous: a loaded machine takes its time to start the emulators; the test's own timeout comes first.
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 120_000);
    // The whole banner: its last line is the sign-in's curl (stdout may arrive in pieces).
    const check = () => {
      const m = /API:\s+(http:\/\/\S+)/.exec(out);
      if (m && /Authorization: Bearer \$TOKEN" \S+\/auth\n/.test(out)) {
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
    pid: child.pid!,
    output: () => out,
    exited,
    signal: (signal) => child.kill(signal),
    async stop() {
      child.kill('SIGINT');
      return exited;
    },
  };
}
