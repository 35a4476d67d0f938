import { defineConfig } from 'vitest/config';

// Tests in four tiers, each a project (`npm run test:<tier>`; `npm test` runs them all):
// - unit: beside the code they test (`shared/`, `services/`, `projections/`), no process, network or
//   database; seconds in all, for the inner loop;
// - integration: `test/<area>/`, a gateway or runtime in the test's process against real PostgreSQL,
//   Redis, SQLite files and wire mocks of upstreams;
// - e2e: `test/e2e/`, `test/cli/`, `test/scale/`, `test/fuzz/`: the server as users run it (the CLI,
//   several processes, crashes), or every route at once;
// - browser: `test/console/`, the consoles driven in Debian's Chromium.
const BESIDE_CODE = ['{shared,services,projections,bin,sdk,bench}/**/*.test.ts'];
const E2E = [
  'test/e2e/**/*.test.ts',
  'test/cli/**/*.test.ts',
  'test/scale/**/*.test.ts',
  'test/fuzz/**/*.test.ts',
];
const BROWSER = ['test/console/**/*.test.ts'];
// The browser tests drive the consoles as built from their current sources; the CLI tests run the
// server as compiled ahead of time from them.
const BUILDS = ['test/console/support/build.ts', 'test/support/build-server.ts'];

export default defineConfig({
  test: {
    exclude: ['node_modules/**', '.studio/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The PostgreSQL and end-to-end suites are heavy; two workers match this 2-core machine.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: BESIDE_CODE } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...E2E, ...BROWSER, 'node_modules/**'],
          globalSetup: BUILDS,
        },
      },
      { extends: true, test: { name: 'e2e', include: E2E, globalSetup: BUILDS } },
      { extends: true, test: { name: 'browser', include: BROWSER, globalSetup: BUILDS } },
    ],
  },
});
