import type { FileStorage } from '#shared/files/storage.ts';

// The bucket's objects in a map, for code that only stores and reads objects (the vector stores):
// the FileStorage calls they make, with S3's NoSuchKey for a missing key.

export type MemoryStorage = FileStorage & {
  /** Bytes held under keys ending in `suffix` (all by default). */
  bytes(suffix?: string): number;
};

export function memoryStorage(): MemoryStorage {
  const objects = new Map<string, Uint8Array>();
  return {
    get: async (key: string) => {
      const o = objects.get(key);
      if (!o) throw Object.assign(new Error(key), { name: 'NoSuchKey' });
      return o;
    },
    put: async (key: string, body: Uint8Array | string) => void objects.set(key, Buffer.from(body)),
    deleteKeys: async (keys: string[]) => keys.forEach((k) => objects.delete(k)),
    listKeys: async (prefix: string) => [...objects.keys()].filter((k) => k.startsWith(prefix)),
    deletePrefix: async (prefix: string) => {
      let deleted = 0;
      for (const k of [...objects.keys()]) if (k.startsWith(prefix) && objects.delete(k)) deleted++;
      return deleted;
    },
    bytes: (suffix = '') => [...objects].reduce((n, [k, o]) => (k.endsWith(suffix) ? n + o.byteLength : n), 0),
  } as unknown as MemoryStorage;
}
