import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // One embedded PostgreSQL cluster for the whole run; each test file makes its own database.
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Most test files wait on PostgreSQL, child processes and the browser rather than compute: two
    // files at a time use a 2-core machine better than vitest's default of one (cores - 1).
    maxWorkers: 2,
    minWorkers: 1,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
