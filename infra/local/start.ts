import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../../shared/config.ts';
import { describeAiProvider } from '../../shared/ai/provider.ts';
import { startLocalRuntime } from './runtime.ts';
import { DataDirInUseError } from './data-dir-lock.ts';

// `npm start`: the whole service on this machine. PORT and DATA_DIR choose where; everything
// else is configured like the deployed functions (see the README's configuration table).

const local = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    DATA_DIR: z.string().min(1).default('.data'),
  })
  .safeParse(process.env);
if (!local.success) {
  console.error(`Invalid configuration: ${local.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  process.exit(1);
}
const { PORT, DATA_DIR } = local.data;

try {
  const runtime = await startLocalRuntime({ port: PORT, dataDir: resolve(DATA_DIR), persist: true });
  console.log(`API:         ${runtime.url}`);
  console.log(`Playground:  ${new URL('/', runtime.url).href}`);
  console.log(`Reference:   ${new URL('/docs', runtime.url).href}`);
  console.log(`AI provider: ${describeAiProvider(runtime.config)}`);
  console.log(`Data:        ${resolve(DATA_DIR)}`);
  console.log(`Sign in:     TOKEN=$(npm run -s token -- --email you@example.com)`);
  console.log(`             curl -XPOST -H "Authorization: Bearer $TOKEN" ${runtime.url}/auth`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) process.exit(130); // a second Ctrl-C does not wait
    stopping = true;
    console.log(`\n${signal}: stopping (saving data)...`);
    await runtime.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
} catch (err) {
  if (err instanceof ConfigError || err instanceof DataDirInUseError) console.error(err.message);
  else if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') console.error(`Port ${PORT} is in use; set PORT to another one.`);
  else console.error(err);
  process.exit(1);
}
