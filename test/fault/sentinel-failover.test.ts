/**
 * Sentinel failover while two CLI workers run: the master is killed -9 (its
 * replica caught up first, so nothing acknowledged is lost) and the
 * sentinels promote the replica. Every run runs once and completes, no
 * worker exceeds its capacity, and a CLI stage and read issued as the master
 * dies wait for the new one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runThroughFailover } from '../support/failover-scenario.js';
import { newQueue } from '../support/fitq.js';
import { startSentinelGroup, type SentinelGroup } from '../support/redis-sentinel.js';

let group: SentinelGroup;

beforeAll(async () => {
  group = await startSentinelGroup();
}, 60_000);

afterAll(async () => {
  await group?.dispose();
});

describe('a Sentinel failover while workers run', () => {
  it('runs every run once to its true end, oversubscribes nothing, and CLI commands wait for the new master', async () => {
    const outcome = await runThroughFailover(newQueue(), group.url, () => group.failover({ caughtUp: true }));
    const { stage, runs } = outcome.duringFailover;
    expect(stage.exitCode, stage.stderr).toBe(0);
    expect(runs.exitCode, runs.stderr).toBe(0);
    for (const worker of outcome.workers) {
      expect(worker.messages().some((message) => /^Redis reconnected after \d+\.\ds$/.test(message)), worker.stdout()).toBe(true);
    }
  }, 240_000);
});
