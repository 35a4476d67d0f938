import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', '.studio/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The PostgreSQL and end-to-end suites are heavy; two workers match this 2-core machine.
    maxWorkers: 2,
    // The browser tests drive the consoles as built from their current sources; the CLI tests run
    // the server as compiled ahead of time from them.
    globalSetup: ['test/console/support/build.ts', 'test/support/build-server.ts'],
  },
});
