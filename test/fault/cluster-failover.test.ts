/**
 * Redis Cluster failover while two CLI workers run: the master that serves
 * the namespace's slot is killed -9 (its replica caught up first, so nothing
 * acknowledged is lost) and the replica takes the slot over. Every run runs
 * once and completes, no worker exceeds its capacity, and a CLI stage and
 * read issued as the master dies wait for the new one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PREFIX, namespaceKeys } from '../../src/queue/keys.js';
import { runThroughFailover } from '../support/failover-scenario.js';
import { newQueue } from '../support/fitq.js';
import { startRedisCluster, type RedisClusterTopology } from '../support/redis-cluster.js';

let cluster: RedisClusterTopology;

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.dispose();
});

describe('a Cluster failover while workers run', () => {
  it('runs every run once to its true end, oversubscribes nothing, and CLI commands wait for the promoted replica', async () => {
    const queue = newQueue();
    const base = namespaceKeys(queue, process.env.FITQ_PREFIX || DEFAULT_PREFIX).base;
    const outcome = await runThroughFailover(queue, cluster.url, () => cluster.failover(base, { caughtUp: true }));
    const { stage, runs } = outcome.duringFailover;
    expect(stage.exitCode, stage.stderr).toBe(0);
    expect(runs.exitCode, runs.stderr).toBe(0);
    for (const worker of outcome.workers) expect(worker.stderr()).not.toMatch(/Warning|Error/);
  }, 240_000);
});
