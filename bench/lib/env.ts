// Imported first by the runner: settings that must be in place before any module of the
// service is evaluated (the logger reads LOG_LEVEL once, when it is first imported). The
// functions run in this process, as under `npm start`; their per-request log lines would
// otherwise go to the benchmark's output.

/** The environment the benchmark was started with, before the local runtime adds its wiring. */
export const startingEnv: Readonly<Record<string, string | undefined>> = { ...process.env };

process.env.LOG_LEVEL = 'SILENT';

/**
 * Runs `spawnChild` (which must start its child process synchronously, before its first await)
 * with the environment the benchmark started with: the in-process runtime exported its table,
 * endpoints and identity provider, which a second service must not inherit.
 */
export function withStartingEnv<T>(spawnChild: () => T): T {
  const current = { ...process.env };
  for (const key of Object.keys(process.env)) if (!(key in startingEnv)) delete process.env[key];
  for (const [key, value] of Object.entries(startingEnv)) if (value !== undefined) process.env[key] = value;
  try {
    return spawnChild();
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in current)) delete process.env[key];
    Object.assign(process.env, current);
  }
}
