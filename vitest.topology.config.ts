import { defineConfig } from 'vitest/config';
import { SHARED, TOPOLOGY_TESTS } from './vitest.config.js';

/** The tests that start Redis topologies (see vitest.config.ts), one file at a time. */
export default defineConfig({
  test: { ...SHARED, include: TOPOLOGY_TESTS, maxWorkers: 1 },
});
