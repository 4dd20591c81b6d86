/**
 * A worker on a Redis that is out of memory (maxmemory reached, noeviction),
 * for real: its claims are refused whole, so no run becomes running and
 * nothing is reserved while Redis is full; its heartbeat still renews its
 * lease, so it stays registered, and `fitq workers` shows it using nothing;
 * once Redis has room every run completes.
 * A private redis-server, since the test fills it up.
 */
import { Queue } from 'bullmq';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectClient, fitq, messages, newQueue, startTestWorker } from '../support/fitq.js';
import { fillUp, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.dispose();
});

// Long enough that a loaded machine never lets it lapse between heartbeats (a 1.2 s lease did).
const LEASE_MS = 5000;
const countOf = (logs: readonly Record<string, unknown>[], pattern: RegExp) => messages(logs).filter((message) => pattern.test(message)).length;

it('claims nothing while Redis is out of memory, keeps its lease, and runs everything once Redis has room', async () => {
  const queue = newQueue();
  const client = await connectClient(queue, server.url);
  await client.setPaused(true);
  const { runs } = await client.stage({ command: ['true'], resources: 'cpu=1', repeat: 6 });
  const { worker, logs } = await startTestWorker(queue, {
    redisUrl: server.url,
    resources: 'cpu=4',
    concurrency: 2,
    pollIntervalMs: 100,
    leaseMs: LEASE_MS,
  });
  await waitFor('the worker to find the queue paused', () => countOf(logs, /queue is paused/) > 0);
  const keys = client.keys.worker(worker.name);
  const lift = await fillUp(server.url);
  try {
    const deadline = Number(await client.redis.zscore(client.keys.workers, worker.name));
    // BullMQ's resume (as from Bull Board) still goes through: its scripts declare no flags, and a delete comes first.
    const bull = new Queue(client.keys.queue.name, { prefix: client.keys.queue.prefix, connection: { url: server.url } });
    await bull.resume();
    await bull.close();
    expect(await client.isPaused()).toBe(false);
    const refusedBefore = countOf(logs, /^Claim failed: OOM/);
    await waitFor('three claims refused', () => countOf(logs, /^Claim failed: OOM/) >= refusedBefore + 3);
    // Past the moment its lease would have lapsed without a heartbeat.
    await waitFor('the lease renewed while Redis is full', async () => Number(await client.redis.zscore(client.keys.workers, worker.name)) > deadline + LEASE_MS);

    expect((await client.listRuns()).map((run) => run.status)).toEqual(runs.map(() => 'staged'));
    expect(await client.redis.llen(client.keys.queue.key('active'))).toBe(0);
    expect(await client.redis.hgetall(keys.free)).toEqual({ cpu: '4' });
    expect(await client.redis.hget(keys.info, 'running')).toBe('0');
    expect(await client.redis.scard(keys.runs)).toBe(0);
    expect(await client.redis.hlen(keys.reserved)).toBe(0);
    const listed = await fitq(['workers', '--json'], { queue, env: { FITQ_REDIS_URL: server.url } });
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as Record<string, unknown>[]).map(({ name, used, runs }) => ({ name, used, runs }))).toEqual([
      { name: worker.name, used: {}, runs: [] },
    ]);
    expect(worker.activeRuns).toEqual([]);
    expect(messages(logs).filter((message) => /Heartbeat failed|lost its registration/.test(message))).toEqual([]);
    await expect(client.redis.set(`${client.keys.base}probe`, '1')).rejects.toThrow(/^OOM/);
  } finally {
    await lift();
  }

  for (const run of runs) expect((await client.waitForEnd(run.id)).status).toBe('completed');
  expect(await client.redis.hgetall(keys.free)).toEqual({ cpu: '4' });
  expect(await client.redis.hget(keys.info, 'running')).toBe('0');
  expect(messages(logs).filter((message) => /lost its registration|registered again/.test(message))).toEqual([]);
});
