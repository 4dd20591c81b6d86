/**
 * A worker whose claim Redis lost (as a failover loses it: see
 * test/support/lost-writes.ts) and that claims the same run again before a
 * heartbeat takes the lost claim back: it keeps the process it started,
 * under the new claim, rather than starting the run a second time.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue } from '../support/fitq.js';
import { loseWritesSince, saveKeys } from '../support/lost-writes.js';

describe('a run claimed again by the worker that runs it, its first claim lost', () => {
  it('runs on under the new claim: started once, its end recorded', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const redis = client.redis as Redis;
    const dir = mkdtempSync(join(tmpdir(), 'fitq-lost-claims-'));
    const [go, starts] = [join(dir, 'go'), join(dir, 'starts')];
    // A heartbeat every 100 s: the claim, not the heartbeat, finds the run again.
    const worker = spawnCliWorker(queue, ['-r', 'cpu=2', '--name', 'w', '--lease', '300']);
    await worker.waitForMessage('Worker resources: cpu=2');
    const staged = await fitq(
      ['stage', '-r', 'cpu=1', '--begin', 'now+3s', '--', 'sh', '-c', `echo start >> '${starts}'; while [ ! -e '${go}' ]; do sleep 0.05; done`],
      { queue },
    );
    expect(staged.exitCode, staged.stderr).toBe(0);
    const runId = staged.stdout.trim();
    // Saved before its begin time, so before any claim of it.
    const saved = await saveKeys(redis, client.keys.base);
    expect(await redis.hget(client.keys.run(runId), 'status')).toBe('staged');
    await worker.waitForMessage(`Run ${runId} started`);
    await loseWritesSince(redis, client.keys.base, saved);

    // A run staged wakes the worker: it claims the lost run again first (the older), then this one.
    const wake = await fitq(['stage', '-r', 'cpu=1', '--', 'true'], { queue });
    await worker.waitForMessage(`Run ${wake.stdout.trim()} completed`);
    await worker.waitForMessage(
      `Run ${runId} was claimed again by this worker, which already runs it (a failover lost its claim): it runs on under the new claim`,
    );
    writeFileSync(go, '');
    expect(await client.waitForEnd(runId)).toMatchObject({ status: 'completed', exitCode: 0, worker: 'w' });
    expect(existsSync(starts) && readFileSync(starts, 'utf8')).toBe('start\n');
    expect(await redis.hget(client.keys.worker('w').free, 'cpu')).toBe('2');
  });
});
