/**
 * A running run put back as staged by hand (`HSET <job> status staged` and
 * its id added back to its staged index, with a plain Redis client, while a
 * real worker runs it) is not started a second time: its claim is still
 * live (its job's lock, its worker's record of the claim), so claims drop
 * the entry. Its one copy goes on (its worker's heartbeat, or its end, gives
 * it its status back) and its end is recorded, so it is never left staged
 * with no index entry for anyone to claim; exactly what its claim reserved
 * comes back, from the worker's record of it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { Scripts } from '../../src/queue/scripts.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, indexShapeByHand, newQueue, redisUrl, stagedShape } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

const plainClients: Redis[] = [];
afterEach(() => {
  for (const redis of plainClients.splice(0)) redis.disconnect();
});

/** A shell command that runs until `path` exists. */
const untilExists = (path: string) => `while [ ! -e '${path}' ]; do sleep 0.05; done`;

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
    const gate = join(mkdtempSync(join(tmpdir(), 'fitq-replay-')), 'go');
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1', '--kill-grace', '1']);
    await worker.waitForMessage('Worker resources: cpu=1');
    // It runs until the test lets it end.
    const runId = (await client.stage({ command: ['sh', '-c', untilExists(gate)], resources: 'cpu=1 lic=1', runId: 'replayed' })).runs[0]!.id;
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

    // Its one copy ends by itself, and that end is recorded.
    writeFileSync(gate, '');
    await worker.waitForMessage(`Run ${runId} completed`);
    expect(await redis.hget(keys.run(runId), 'status')).toBe('completed');
    await waitFor('the claim to be given back', async () => (await client.redis.hget(keys.worker('w1').info, 'running')) === '0');
    expect(await capacity(client, 'w1')).toEqual(idle);
    expect(await capacity(client, 'w2')).toEqual(idle);
    expect(worker.messages().filter((message) => message === `Run ${runId} started`)).toHaveLength(1);
    worker.process.kill('SIGTERM');
    expect((await worker.exited).exitCode).toBe(0);
    await scripts.deregisterWorker('w2', 'tok');
  });
});

describe('a running run replayed as staged, then seen by its worker', () => {
  it('goes on to its own end, recorded, and is never left staged with nobody to claim it', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { keys } = client;
    const scripts = new Scripts(client.redis, keys, 100);
    const dir = mkdtempSync(join(tmpdir(), 'fitq-replay-'));
    const gate = join(dir, 'go');
    // A short lease: its worker's heartbeat (every second) sees the replay while the run waits for the test.
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1', '--lease', '3', '--kill-grace', '1']);
    await worker.waitForMessage('Worker resources: cpu=1');
    const runId = (await client.stage({ command: ['sh', '-c', untilExists(gate)], resources: 'cpu=1', runId: 'replayed2' })).runs[0]!.id;
    await worker.waitForMessage(`Run ${runId} started`);
    expect(await scripts.registerWorker({ name: 'w2', token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources: 'cpu=1' })).toBe(true);

    const redis = new Redis(redisUrl());
    plainClients.push(redis);
    const score = await redis.hget(keys.run(runId), 'score');
    await redis.hset(keys.run(runId), 'status', 'staged');
    await redis.zadd(keys.staged(stagedShape('cpu=1')), score!, runId);
    await indexShapeByHand(redis, keys, stagedShape('cpu=1'), score!);
    // The forged copy is refused to another worker.
    expect(await scripts.claimRun('w2', 'tok', 0)).toEqual({ code: 'idle', ignored: [] });
    // Two heartbeats of its worker have seen it since.
    const beat = async () => Number(await redis.hget(keys.worker('w1').info, 'heartbeatAt'));
    const first = await beat();
    await waitFor('a heartbeat', async () => (await beat()) > first);
    const second = await beat();
    await waitFor('another heartbeat', async () => (await beat()) > second);

    writeFileSync(gate, '');
    await waitFor('the run to end', async () => {
      const status = await redis.hget(keys.run(runId), 'status');
      return status !== 'running' && status !== 'staged' ? status : undefined;
    }, 20_000).catch(async (error: unknown) => {
      throw new Error(`${(error as Error).message}: it is ${await redis.hget(keys.run(runId), 'status')}; worker log:\n${worker.messages().join('\n')}`);
    });
    expect(await redis.hget(keys.run(runId), 'status')).toBe('completed');
    expect(worker.messages().filter((message) => message === `Run ${runId} started`)).toHaveLength(1);
    expect(await redis.zscore(keys.staged(stagedShape('cpu=1')), runId)).toBeNull();
    expect(await redis.zscore(keys.queue.key('prioritized'), runId)).toBeNull();
    expect(await scripts.claimRun('w2', 'tok', 0)).toEqual({ code: 'idle', ignored: [] });
    await waitFor('the claim to be given back', async () => (await client.redis.hget(keys.worker('w1').info, 'running')) === '0');
    worker.process.kill('SIGTERM');
    expect((await worker.exited).exitCode).toBe(0);
    await scripts.deregisterWorker('w2', 'tok');
  });
});

describe('a claimed run replayed as staged before its worker heartbeats', () => {
  it('has its end recorded by its claim, its forged entries gone', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { keys } = client;
    const scripts = new Scripts(client.redis, keys, 100);
    expect(await scripts.registerWorker({ name: 'w3', token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources: 'cpu=1' })).toBe(true);
    const runId = (await client.stage({ command: ['true'], resources: 'cpu=1', runId: 'replayed3' })).runs[0]!.id;
    const claim = await scripts.claimRun('w3', 'tok', 0);
    expect(claim.code).toBe('claimed');
    const epoch = (claim as { epoch: string }).epoch;

    const redis = new Redis(redisUrl());
    plainClients.push(redis);
    const score = await redis.hget(keys.run(runId), 'score');
    await redis.hset(keys.run(runId), 'status', 'staged');
    await redis.zadd(keys.staged(stagedShape('cpu=1')), score!, runId);
    await indexShapeByHand(redis, keys, stagedShape('cpu=1'), score!);
    await redis.zadd(keys.queue.key('prioritized'), score!, runId);

    const finished = await scripts.finishRun({ runId, worker: 'w3', token: 'tok', epoch, status: 'completed', exitCode: 0, reason: 'exit code 0' });
    expect(finished).toEqual({ outcome: 'recorded', status: 'completed' });
    expect(await redis.hget(keys.run(runId), 'status')).toBe('completed');
    expect(await redis.zscore(keys.staged(stagedShape('cpu=1')), runId)).toBeNull();
    expect(await redis.zscore(keys.queue.key('prioritized'), runId)).toBeNull();
    expect(await redis.zscore(keys.group('cpu'), 'cpu=1')).toBeNull();
    expect(await capacity(client, 'w3')).toEqual({ free: { cpu: '1' }, claims: [], running: '0', pool: null });
    await scripts.deregisterWorker('w3', 'tok');
  });
});
