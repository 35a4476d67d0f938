import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', '.studio/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // PGlite and PostgreSQL suites are heavy; two workers match this 2-core machine.
    maxWorkers: 2,
  },
});
