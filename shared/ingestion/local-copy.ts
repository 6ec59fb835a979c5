import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileStorage } from '../files/storage.ts';

// A stored document as a file of the function's own temporary directory, for the reading child to read
// in ranges (docs/DECISIONS.md, Large PDFs: nothing holds the whole file). Each copy gets a
// directory of its own (concurrent stages of one instance never share a name). Lambda's /tmp is
// sized for PDF_MAX_BYTES in the stack.

export interface LocalCopy {
  path: string;
  /** Removes the file (never fails; call it whatever happened). */
  remove: () => Promise<void>;
}

/** Streams the object at `key` to a temporary file; nothing is left behind when that fails. */
export async function localCopy(storage: FileStorage, key: string): Promise<LocalCopy> {
  const dir = await mkdtemp(join(tmpdir(), 'pdf-'));
  const remove = () => rm(dir, { recursive: true, force: true }).catch(() => undefined);
  const path = join(dir, 'source.pdf');
  try {
    await storage.toFile(key, path);
  } catch (err) {
    await remove();
    throw err;
  }
  return { path, remove };
}
