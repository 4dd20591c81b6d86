/**
 * A running run put back as staged by hand (`HSET <job> status staged` and
 * its id added back to its staged index, with a plain Redis client, while a
 * real worker runs it) is not started a second time: its claim is still
 * live (its job's lock, its worker's record of the claim), so claims drop
 * the entry. When the one copy ends, exactly what its claim reserved comes
 * back, from the worker's record of it.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/queue/client.js';
import { Scripts } from '../../src/queue/scripts.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, indexShapeByHand, newQueue, redisUrl } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

const plainClients: Redis[] = [];
afterEach(() => {
  for (const redis of plainClients.splice(0)) redis.disconnect();
});

/** The worker's free capacity and reserved claims, and the pool's use. */
async function capacity(client: FitqClient, worker: string): Promise<unknown> {
  const w = client.keys.worker(worker);
  return {
    free: await client.redis.hgetall(w.free),
    claims: await client.redis.hkeys(w.reserved),
    running: await client.redis.hget(w.info, 'running'),
    pool: await client.redis.hget(client.keys.poolUsed, 'lic'),
  };
}

describe('a running run replayed as staged', () => {
  it('is not started again, and its end gives back exactly what its claim reserved', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { keys } = client;
    const scripts = new Scripts(client.redis, keys, 100);
    await client.setPool('lic=2');
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1', '--kill-grace', '1']);
    await worker.waitForMessage('Worker resources: cpu=1');
    const runId = (await client.stage({ command: ['sleep', '3'], resources: 'cpu=1 lic=1', runId: 'replayed' })).runs[0]!.id;
    await worker.waitForMessage(`Run ${runId} started`);
    const idle = { free: { cpu: '1' }, claims: [], running: '0', pool: '0' };
    // (The pool has room for a second copy: only the claim's check keeps it from starting.)
    expect(await capacity(client, 'w1')).toEqual({ free: { cpu: '0' }, claims: [runId], running: '1', pool: '1' });
    // Another worker that could run it (registered here, so its claims are seen one by one).
    expect(await scripts.registerWorker({ name: 'w2', token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources: 'cpu=1' })).toBe(true);

    // The replay, as anyone with write access could do it.
    const redis = new Redis(redisUrl());
    plainClients.push(redis);
    const score = await redis.hget(keys.run(runId), 'score');
    await redis.hset(keys.run(runId), 'status', 'staged');
    await redis.zadd(keys.staged('cpu=1,lic=1'), score!, runId);
    await indexShapeByHand(redis, keys, 'cpu=1,lic=1', score!);
    await redis.zadd(keys.queue.key('prioritized'), score!, runId);

    for (let i = 0; i < 3; i++) expect(await scripts.claimRun('w2', 'tok', 0)).toEqual({ code: 'idle', ignored: [] });
    expect(await redis.zscore(keys.staged('cpu=1,lic=1'), runId)).toBeNull();
    expect(await redis.zscore(keys.group('cpu,lic'), 'cpu=1,lic=1')).toBeNull();
    expect(await capacity(client, 'w2')).toEqual({ ...idle, pool: '1' });
    expect(await redis.hget(keys.run(runId), 'epoch')).toBe('1');
    // Catching up with BullMQ (a full pass: runs:prioritized holds more than the index) does not stage it again either.
    await client.reconcile();
    expect(await redis.zscore(keys.staged('cpu=1,lic=1'), runId)).toBeNull();
    expect(await scripts.claimRun('w2', 'tok', 0)).toEqual({ code: 'idle', ignored: [] });

    // Its one copy ends (by itself, or stopped by its worker, which sees the job is no longer its running run).
    await worker.waitForMessage(new RegExp(`^Run ${runId} .* but its result was not recorded`), 20_000);
    await waitFor('the claim to be given back', async () => (await client.redis.hget(keys.worker('w1').info, 'running')) === '0');
    expect(await capacity(client, 'w1')).toEqual(idle);
    expect(await capacity(client, 'w2')).toEqual(idle);
    expect(worker.messages().filter((message) => message === `Run ${runId} started`)).toHaveLength(1);
    worker.process.kill('SIGTERM');
    expect((await worker.exited).exitCode).toBe(0);
    await scripts.deregisterWorker('w2', 'tok');
  });
});
