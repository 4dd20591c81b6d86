/**
 * Writes a failover loses: Redis replication is asynchronous, so a write the
 * master acknowledged but had not sent to its replica is gone once the
 * replica takes over. Reproduced for real on a Sentinel group: the replica
 * is frozen and cut off, the write is made, the master is killed -9 and the
 * replica promoted.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { fitq, newQueue } from '../support/fitq.js';
import { startSentinelGroup, type SentinelGroup } from '../support/redis-sentinel.js';

let group: SentinelGroup;
const dir = mkdtempSync(join(tmpdir(), 'fitq-lost-writes-'));

beforeAll(async () => {
  group = await startSentinelGroup();
}, 60_000);

afterAll(async () => {
  await group?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('writes a failover loses', () => {
  it('a run whose recorded end the failover lost is recorded again by its worker: completed with exit 0, never lost', async () => {
    const queue = newQueue();
    const env = { FITQ_REDIS_URL: group.url };
    const go = join(dir, 'go');
    const staged = await fitq(['stage', '-r', 'cpu=1', '--', 'sh', '-c', `while [ ! -e '${go}' ]; do sleep 0.05; done; exit 0`], { queue, env });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const runId = staged.stdout.trim();
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'lw'], group.url);
    await worker.waitForMessage(`Run ${runId} started`);

    await group.failoverLosing(async () => {
      writeFileSync(go, '');
      // Acknowledged by the master, never to reach the replica.
      await worker.waitForMessage(`Run ${runId} completed`);
    });

    // The new master holds the run as running on lw: its worker records the end again at its next heartbeat.
    await worker.waitForMessage(`Run ${runId}: its end recorded again (completed)`, 60_000);
    const shown = await fitq(['runs', '--json'], { queue, env });
    expect(JSON.parse(shown.stdout)).toMatchObject({ runs: [{ id: runId, status: 'completed', exitCode: 0, worker: 'lw' }] });
    expect(worker.messages().filter((message) => /giving it back|lost/.test(message))).toEqual([]);
  }, 180_000);
});
