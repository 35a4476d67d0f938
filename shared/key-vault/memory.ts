import { checkKeyId, type KeyVault } from './types.ts';

/** Keys of this process only (the in-memory store's). */
export function memoryKeyVault(): KeyVault {
  const keys = new Map<string, string>();
  return {
    kind: 'memory',
    async putIfAbsent(id, value) {
      checkKeyId(id);
      const kept = keys.get(id) ?? value;
      keys.set(id, kept);
      return kept;
    },
    get: async (id) => keys.get(id),
    list: async (prefix) => [...keys.keys()].filter((id) => id.startsWith(prefix)),
    async destroy(ids) {
      let destroyed = 0;
      for (const id of ids) if (keys.delete(id)) destroyed++;
      return destroyed;
    },
    close: async () => undefined,
  };
}
