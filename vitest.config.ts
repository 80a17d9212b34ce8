import { defineConfig } from 'vitest/config';

// One chdb data directory per process: forks keep every test file in its own process,
// and each test opens its own temporary store.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['sidecar/**/*.test.ts', 'test/**/*.test.ts', 'dashboards/**/*.test.ts', 'schemas/**/*.test.ts'],
    globalSetup: ['test/global-tmp.ts'],
    // CI's log is read from its end: the last console lines of each failed file follow the summary.
    reporters: ['default', './test/helpers/failure-logs-reporter.ts'],
    testTimeout: 120_000,
    // Set-up hooks start browsers, stores and corpora: minutes on a loaded machine.
    hookTimeout: 300_000,
  },
});
