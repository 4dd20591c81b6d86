import { defineConfig } from 'vitest/config';

/**
 * Tests that start Redis topologies of their own (a Sentinel group, a 6-node
 * cluster, a master and replica) and kill their masters: run on their own,
 * one file at a time, after the rest (vitest.topology.config.ts). Beside
 * three other files on two cores, their failovers and the rest's timed
 * waits starved each other.
 */
export const TOPOLOGY_TESTS = [
  'test/redis/cluster.test.ts',
  'test/redis/sentinel.test.ts',
  'test/redis/replica-wait.test.ts',
  'test/fault/lost-writes.test.ts',
  'test/fault/sentinel-failover.test.ts',
  'test/fault/cluster-failover.test.ts',
];

/** What both runs share. */
export const SHARED = {
  globalSetup: ['test/global-setup.ts'],
  // Generous: three test files share two cores, and Chromium and CLI processes start slowly under that load.
  testTimeout: 120_000,
  hookTimeout: 30_000,
  pool: 'forks' as const,
};

export default defineConfig({
  test: {
    ...SHARED,
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...TOPOLOGY_TESTS],
    // Test files mostly wait on real processes and Redis, not on the CPU:
    // three at once on a 2-core machine (vitest's default there is one).
    maxWorkers: 3,
  },
});
