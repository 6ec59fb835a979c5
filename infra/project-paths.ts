import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's directory (where package.json is). */
export const projectRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
/** Where `npm run build` writes the bundles, and the stack takes them from. */
export const DEFAULT_OUT_DIR = join(projectRoot, 'dist');
