import { describe, expect, it } from 'vitest';
import { openPgliteStore } from './pglite.ts';

describe('embedded PGlite store', () => {
  it('runs with small shared buffers, so the WASM heap stays small', async () => {
    const { store, driver } = await openPgliteStore(undefined);
    try {
      const { rows } = await driver.query<{ shared_buffers: string }>('show shared_buffers');
      expect(rows[0]?.shared_buffers).toBe('16MB');
    } finally {
      await store.close();
    }
  });
});
