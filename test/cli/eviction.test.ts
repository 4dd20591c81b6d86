/**
 * A Redis that may evict keys (maxmemory-policy other than noeviction) would
 * silently lose runs, reservations and worker leases. Workers refuse to start
 * on one, in one line saying what to set (exit 2); other commands warn in one
 * line on stderr and carry on; nothing is said on a noeviction Redis, nor
 * when INFO is refused. A policy switched to evicting while a worker runs
 * is noticed (at a reconnect, a re-registration, and every poll): the
 * worker says so and claims nothing, nor registers again, until it is
 * noeviction again. Private redis-servers with those policies.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { connectRedis } from '../../src/redis/connection.js';
import { closeRedis } from '../../src/redis/open-connections.js';
import { FitqWorker } from '../../src/worker/worker.js';
import { aclRule } from '../support/acl-rules.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue, type CliResult } from '../support/fitq.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

const WHY = "set maxmemory-policy noeviction, since fitq's runs and reservations are keys that must not vanish";
/** The operator's rule of docs/security.md, for every namespace, less +info. */
const NO_INFO_RULES = aclRule('admin', '*', 'pw').replace(' +info ', ' ');

let evicting: RedisServer;
let limited: RedisServer;
let safe: RedisServer;
/** Its policy is switched while workers run. */
let switched: RedisServer;

beforeAll(async () => {
  [evicting, limited, safe] = await Promise.all([
    startRedisServer({ config: { 'maxmemory-policy': 'allkeys-lru' }, users: { noinfo: NO_INFO_RULES } }),
    startRedisServer({ config: { 'maxmemory-policy': 'volatile-lru', maxmemory: '64mb' } }),
    startRedisServer({ config: { 'maxmemory-policy': 'noeviction', maxmemory: '256mb' } }),
  ]);
  switched = await startRedisServer({ config: { 'maxmemory-policy': 'noeviction' } });
});

afterAll(async () => {
  await Promise.all([evicting, limited, safe, switched].map((server) => server?.dispose()));
});

const envFor = (url: string) => ({ FITQ_REDIS_URL: url, REDIS_URL: '' });
const problem = (server: RedisServer, what: string) => `Redis at ${server.url} may evict keys (${what}): ${WHY}`;
const stderrLines = (result: CliResult) => result.stderr.split('\n').filter((line) => line !== '');

function expectOk(result: CliResult): void {
  expect(result.exitCode, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0);
}

/** Keys of a namespace on a server. */
async function keysOf(server: RedisServer, queue: string): Promise<string[]> {
  const redis = new Redis(server.url);
  try {
    return await redis.keys(`*{${queue}}*`);
  } finally {
    await redis.quit();
  }
}

describe('an evicting Redis', () => {
  it('fitq worker refuses to start: one line saying what to set and why, exit 2, nothing registered', async () => {
    const queue = newQueue();
    const result = await fitq(['worker', '-r', 'cpu=1', '--name', 'w1'], { queue, env: envFor(evicting.url), timeoutMs: 30_000 });
    expect(result.exitCode, result.stderr).toBe(2);
    expect(stderrLines(result)).toEqual([`Error: ${problem(evicting, 'maxmemory-policy allkeys-lru, no maxmemory yet')}`]);
    expect(result.stdout).toBe('');
    expect(await keysOf(evicting, queue)).toEqual([]);
  });

  it('FitqWorker.start rejects with a UsageError and leaves no connection open', async () => {
    const start = FitqWorker.start({ redisUrl: evicting.url, queue: newQueue(), resources: 'cpu=1', echoOutput: false });
    await expect(start).rejects.toThrow(UsageError);
    await expect(start).rejects.toThrow(problem(evicting, 'maxmemory-policy allkeys-lru, no maxmemory yet'));
  });

  it('other commands warn in one line on stderr and carry on', async () => {
    const queue = newQueue();
    const env = envFor(evicting.url);
    const warning = `Warning: ${problem(evicting, 'maxmemory-policy allkeys-lru, no maxmemory yet')}`;
    const staged = await fitq(['stage', '-r', 'cpu=1', '--', 'true'], { queue, env });
    expectOk(staged);
    const id = staged.stdout.trim();
    expect(stderrLines(staged)[0]).toBe(warning);
    expect(stderrLines(staged).filter((line) => line.includes('evict'))).toHaveLength(1);
    const runs = await fitq(['runs'], { queue, env });
    expectOk(runs);
    expect(stderrLines(runs)).toEqual([warning]);
    expect(runs.stdout).toContain(id);
    const logs = await fitq(['logs', id], { queue, env });
    expect(stderrLines(logs)[0]).toBe(warning);
    const canceled = await fitq(['cancel', id], { queue, env });
    expectOk(canceled);
    expect(stderrLines(canceled)).toEqual([warning]);
  });

  it('names maxmemory when one is set', async () => {
    const result = await fitq(['runs'], { queue: newQueue(), env: envFor(limited.url) });
    expectOk(result);
    expect(stderrLines(result)).toEqual([`Warning: ${problem(limited, 'maxmemory-policy volatile-lru, maxmemory 64.00M')}`]);
  });

  it('says nothing when INFO is refused to the user', async () => {
    const url = evicting.urlFor('noinfo', 'pw');
    const queue = newQueue();
    const staged = await fitq(['stage', '--', 'true'], { queue, env: envFor(url) });
    expectOk(staged);
    expect(staged.stderr).not.toContain('maxmemory');
    const runs = await fitq(['runs'], { queue, env: envFor(url) });
    expectOk(runs);
    expect(runs.stderr).not.toContain('maxmemory');
    const redis = await connectRedis({ redisUrl: url, evictionCheck: 'refuse' });
    await closeRedis(redis);
  });
});

describe('a noeviction Redis', () => {
  it('is used without a word, with a maxmemory or not', async () => {
    const queue = newQueue();
    const env = envFor(safe.url);
    const staged = await fitq(['stage', '-r', 'cpu=1', '--', 'true'], { queue, env });
    expectOk(staged);
    expect(staged.stderr).not.toContain('maxmemory');
    const worker = await fitq(['worker', '-r', 'cpu=1', '--run-once', '--log-format', 'json'], { queue, env, timeoutMs: 30_000 });
    expectOk(worker);
    expect(worker.stderr).toBe('');
    const runs = await fitq(['runs'], { queue, env });
    expectOk(runs);
    expect(runs.stderr).toBe('');
    expect(runs.stdout).toMatch(/completed/);
    // The test Redis every other test uses: its default policy, noeviction.
    const global = await fitq(['runs'], { queue });
    expectOk(global);
    expect(global.stderr).toBe('');
  });
});

describe('a Redis switched to an evicting policy while a worker runs', () => {
  const plain: Redis[] = [];
  afterAll(() => plain.forEach((redis) => redis.disconnect()));
  async function setPolicy(policy: string): Promise<void> {
    const redis = new Redis(switched.url);
    plain.push(redis);
    await redis.config('SET', 'maxmemory-policy', policy);
  }
  const evicts = (line: string) => `${line}; claiming no runs until it is noeviction again`;

  it('is noticed: the worker says so, claims nothing meanwhile, and claims again once it is noeviction', async () => {
    const queue = newQueue();
    const client = await connectClient(queue, switched.url);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w1', '--lease', '3'], switched.url);
    await worker.waitForMessage('Worker resources: cpu=1');
    try {
      await setPolicy('allkeys-lru');
      const said = evicts(problem(switched, 'maxmemory-policy allkeys-lru, no maxmemory yet'));
      await worker.waitForMessage(said);
      expect(worker.logs().find((entry) => entry.msg === said)?.level).toBe(50);
      const id = (await client.stage({ command: ['true'], resources: 'cpu=1' })).runs[0]!.id;
      // Two heartbeats later (a second apart), long after the run's staging woke the worker: still staged.
      const beat = async () => Number(await client.redis.hget(client.keys.worker('w1').info, 'heartbeatAt'));
      for (let beats = 0; beats < 2; beats++) {
        const since = await beat();
        await waitFor('a heartbeat', async () => (await beat()) > since);
      }
      expect((await client.getRun(id))?.status).toBe('staged');
      await setPolicy('noeviction');
      await worker.waitForMessage('Redis no longer evicts keys (maxmemory-policy noeviction): claiming runs again');
      // Its log says so in order (Redis may record the end before the worker's log lines reach the test).
      await worker.waitForMessage(`Run ${id} completed`);
      expect((await client.getRun(id))?.status).toBe('completed');
      const messages = worker.messages();
      expect(messages.indexOf(`Scheduling run ${id} (requires cpu=1)`)).toBeGreaterThan(
        messages.indexOf('Redis no longer evicts keys (maxmemory-policy noeviction): claiming runs again'),
      );
    } finally {
      await setPolicy('noeviction');
    }
    worker.process.kill('SIGTERM');
    expect((await worker.exited).exitCode).toBe(0);
  });

  it('keeps a worker that lost its registration from registering again until it is noeviction', async () => {
    const queue = newQueue();
    const client = await connectClient(queue, switched.url);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'w2', '--lease', '3', '--kill-grace', '1'], switched.url);
    await worker.waitForMessage('Worker resources: cpu=1');
    try {
      await setPolicy('volatile-lru');
      // Its registration goes, as an evicted key would.
      await client.redis.zrem(client.keys.workers, 'w2');
      await worker.waitForMessage(/^Worker w2 lost its registration/);
      await worker.waitForMessage(
        `Not registering again: ${problem(switched, 'maxmemory-policy volatile-lru, no maxmemory yet')}`,
      );
      expect(await client.redis.zscore(client.keys.workers, 'w2')).toBeNull();
      await setPolicy('noeviction');
      await worker.waitForMessage('Worker w2 registered again');
      const id = (await client.stage({ command: ['true'], resources: 'cpu=1' })).runs[0]!.id;
      await waitFor('the run to complete', async () => (await client.getRun(id))?.status === 'completed');
    } finally {
      await setPolicy('noeviction');
    }
    worker.process.kill('SIGTERM');
    expect((await worker.exited).exitCode).toBe(0);
  });
});
