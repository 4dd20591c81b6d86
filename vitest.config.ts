import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Generous: three test files share two cores, and Chromium and CLI processes start slowly under that load.
    testTimeout: 120_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Test files mostly wait on real processes and Redis, not on the CPU:
    // three at once on a 2-core machine (vitest's default there is one).
    maxWorkers: 3,
  },
});
