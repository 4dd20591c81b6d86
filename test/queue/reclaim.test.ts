/**
 * Taking back a claim a failover lost (reclaimRun), step by step. The loss
 * is made exactly as a failover makes it (test/support/lost-writes.ts):
 * every key of the namespace saved before the claim is put back after it.
 * (The real failover, with real workers, is in test/fault/lost-writes.test.ts.)
 */
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import type { ClaimedRun } from '../../src/model/claimed-run.js';
import { Scripts } from '../../src/queue/scripts.js';
import { connectClient, newQueue, redisUrl } from '../support/fitq.js';
import { snapshotKeys } from '../support/key-snapshot.js';
import { loseWritesSince, saveKeys } from '../support/lost-writes.js';

const clients: FitqClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

async function setUp(workers: Record<string, string>, devices?: number[]) {
  const queue = newQueue();
  const client = await connectClient(queue);
  clients.push(client);
  const scripts = new Scripts(client.redis, client.keys, 100);
  for (const [name, resources] of Object.entries(workers)) {
    const registered = await scripts.registerWorker({
      name, token: `tok-${name}`, leaseMs: 600_000, concurrency: 0, host: 'h', pid: 1, resources, ...(devices ? { devices } : {}),
    });
    expect(registered).toBe(true);
  }
  // (One Redis, not a cluster: DUMP and RESTORE of every key from one connection.)
  return { queue, client, scripts, redis: client.redis as Redis, base: client.keys.base };
}

async function claim(scripts: Scripts, worker: string): Promise<ClaimedRun> {
  const result = await scripts.claimRun(worker, `tok-${worker}`, 0);
  if (result.code !== 'claimed') throw new Error(`expected a claim, got ${result.code}`);
  return result.claim;
}

/** A run staged, then claimed by `worker` in writes the failover loses: the claim, as the worker received it. */
async function lostClaim(env: Awaited<ReturnType<typeof setUp>>, worker: string): Promise<ClaimedRun> {
  const saved = await saveKeys(env.redis, env.base);
  const claimed = await claim(env.scripts, worker);
  await loseWritesSince(env.redis, env.base, saved);
  return claimed;
}

/** The keys' content, but BullMQ's event stream (its entries' ids are the server's clock). */
async function contentOf(redis: Redis, base: string): Promise<Map<string, string>> {
  const keys = await snapshotKeys(redis, base);
  for (const key of keys.keys()) if (key.endsWith(':events')) keys.delete(key);
  return keys;
}

describe('reclaimRun: a claim a failover lost', () => {
  it('is taken back as it was while nothing happened to its run: every key as the claim left it', async () => {
    const env = await setUp({ w1: 'cpu=4 gpu=2' }, [0, 1]);
    await env.client.setPool('lic=1');
    await env.client.stage({ command: ['true'], resources: 'cpu=1 gpu=1 lic=1', runId: 'r1', timeLimit: '1m' });
    const saved = await saveKeys(env.redis, env.base);
    const claimed = await claim(env.scripts, 'w1');
    const afterClaim = await contentOf(env.redis, env.base);
    await loseWritesSince(env.redis, env.base, saved);
    expect(await env.redis.hget(`${env.base}runs:r1`, 'status')).toBe('staged');

    expect(await env.scripts.reclaimRun('w1', 'tok-w1', claimed)).toEqual({ code: 'reclaimed' });
    expect(await contentOf(env.redis, env.base)).toEqual(afterClaim);
    // Asked again (a second heartbeat): it is held already.
    expect(await env.scripts.reclaimRun('w1', 'tok-w1', claimed)).toEqual({ code: 'held' });
    // Its end is recorded under the claim, and gives back what it reserved.
    expect(await env.scripts.finishRun({ runId: 'r1', worker: 'w1', token: 'tok-w1', epoch: claimed.epoch, status: 'completed', exitCode: 0, reason: '' }))
      .toEqual({ outcome: 'recorded', status: 'completed' });
    expect(await env.redis.hgetall(env.client.keys.worker('w1').free)).toMatchObject({ cpu: '4', gpu: '2' });
    expect(await env.redis.hget(env.client.keys.poolUsed, 'lic')).toBe('0');
  });

  it('finds the run claimed by another worker meanwhile: this copy is stopped, and the run\'s history says why', async () => {
    const env = await setUp({ w1: 'cpu=1', w2: 'cpu=1' });
    await env.client.stage({ command: ['true'], resources: 'cpu=1', runId: 'r1' });
    const claimed = await lostClaim(env, 'w1');
    expect((await claim(env.scripts, 'w2')).runId).toBe('r1');
    const before = await contentOf(env.redis, env.base);

    expect(await env.scripts.reclaimRun('w1', 'tok-w1', claimed)).toEqual({ code: 'lost', why: 'moved', status: 'running', other: 'w2' });
    const after = await contentOf(env.redis, env.base);
    // Nothing changed but the run's history.
    const attemptsKey = env.client.keys.runAttempts('r1');
    after.delete(attemptsKey);
    expect(after).toEqual(before);
    const run = await env.client.getRun('r1');
    expect(run).toMatchObject({ status: 'running', worker: 'w2' });
    expect(run.attempts).toEqual([
      expect.objectContaining({
        attempt: 1, worker: 'w1', status: 'stopped',
        reason: 'its claim on w1 was lost in a Redis failover and worker w2 claimed the run again meanwhile: this copy was stopped',
      }),
    ]);
  });

  it('finds what the claim reserved taken by another run: this copy is stopped, the run stays staged', async () => {
    const env = await setUp({ w1: 'cpu=1' });
    await env.client.stage({ command: ['true'], resources: 'cpu=1', runId: 'r1' });
    const claimed = await lostClaim(env, 'w1');
    await env.client.stage({ command: ['true'], resources: 'cpu=1', runId: 'urgent', priority: 10 });
    expect((await claim(env.scripts, 'w1')).runId).toBe('urgent');

    expect(await env.scripts.reclaimRun('w1', 'tok-w1', claimed)).toEqual({ code: 'lost', why: 'noRoom', status: 'staged', other: 'cpu' });
    expect(await env.client.getRun('r1')).toMatchObject({ status: 'staged' });
    expect(await env.redis.hget(env.client.keys.worker('w1').free, 'cpu')).toBe('0');
  });

  it("finds its user's quota reached by a run started meanwhile: this copy is stopped, the quota holds", async () => {
    // The worker has room for both; alice's quota for one.
    const env = await setUp({ w1: 'cpu=2' });
    const alice = await connectClient(env.queue, redisUrl(), { user: 'alice' });
    clients.push(alice);
    await env.client.setQuota({ user: 'alice' }, ['running=1']);
    await alice.stage({ command: ['true'], resources: 'cpu=1', runId: 'r1' });
    const claimed = await lostClaim(env, 'w1');
    await alice.stage({ command: ['true'], resources: 'cpu=1', runId: 'r2', priority: 10 });
    expect((await claim(env.scripts, 'w1')).runId).toBe('r2');

    expect(await env.scripts.reclaimRun('w1', 'tok-w1', claimed)).toEqual({ code: 'lost', why: 'noRoom', status: 'staged', other: 'quota' });
    expect(await env.client.getRun('r1')).toMatchObject({ status: 'staged' });
    expect(await env.redis.hget(env.client.keys.userUsage('alice'), 'runs')).toBe('1');
  });

  it('finds the run held, canceled or removed meanwhile: not taken back', async () => {
    const env = await setUp({ w1: 'cpu=3' });
    await env.client.stage([
      { command: ['true'], resources: 'cpu=1', runId: 'held' },
      { command: ['true'], resources: 'cpu=1', runId: 'canceled' },
      { command: ['true'], resources: 'cpu=1', runId: 'removed' },
    ]);
    const saved = await saveKeys(env.redis, env.base);
    const claims = [await claim(env.scripts, 'w1'), await claim(env.scripts, 'w1'), await claim(env.scripts, 'w1')];
    await loseWritesSince(env.redis, env.base, saved);
    await env.client.holdRuns(['held']);
    await env.client.cancelRuns(['canceled']);
    expect(await env.client.removeRuns(['removed'])).toBe(1);

    const results = await Promise.all(claims.map((claimed) => env.scripts.reclaimRun('w1', 'tok-w1', claimed)));
    expect(results).toEqual([
      { code: 'lost', why: 'parked', status: 'staged', other: '' },
      { code: 'lost', why: 'moved', status: 'canceled', other: '' },
      { code: 'lost', why: 'gone', status: '', other: '' },
    ]);
    expect(await env.redis.hget(env.client.keys.worker('w1').free, 'cpu')).toBe('3');
  });

  it('refuses a worker whose registration is gone', async () => {
    const env = await setUp({ w1: 'cpu=1' });
    await env.client.stage({ command: ['true'], resources: 'cpu=1', runId: 'r1' });
    const claimed = await lostClaim(env, 'w1');
    expect(await env.scripts.reclaimRun('w1', 'another-token', claimed)).toEqual({ code: 'fenced' });
    expect(await env.client.getRun('r1')).toMatchObject({ status: 'staged' });
  });
});
