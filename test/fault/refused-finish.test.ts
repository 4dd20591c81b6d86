/**
 * A run's end that Redis refuses (out of memory, with `maxmemory` set below
 * what it uses) is kept by the worker and recorded once Redis takes writes
 * again: the run ends completed with its output, its reservation is given
 * back then, and the worker claims again. Nothing ends lost meanwhile.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import { namespaceKeys } from '../../src/queue/keys.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { newQueue } from '../support/fitq.js';
import { fillUp, startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer | undefined;
const closers: (() => Promise<unknown>)[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await server?.dispose();
  server = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A Redis of the test's own (its memory limit is changed), a namespace, a fitq client and a plain client on it. */
async function ownRedis(): Promise<{ queue: string; client: FitqClient; redis: Redis }> {
  server = await startRedisServer();
  const queue = newQueue();
  const client = await FitqClient.connect({ redisUrl: server.url, queue });
  closers.push(() => client.close());
  const redis = new Redis(server.url);
  closers.push(() => redis.quit());
  return { queue, client, redis };
}

describe('a run whose end Redis refuses', () => {
  it('is recorded once Redis takes writes again: completed with its output, its capacity given back, nothing lost', async () => {
    const { queue, client, redis } = await ownRedis();
    const dir = mkdtempSync(join(tmpdir(), 'fitq-refused-'));
    dirs.push(dir);
    const go = join(dir, 'go');
    // Each run waits for the marker, then exits 0: two print a line, one prints nothing.
    const waitForGo = `while [ ! -e '${go}' ]; do sleep 0.05; done`;
    const staged = await client.stage([
      { command: ['sh', '-c', `${waitForGo}; echo 'done a'`], resources: 'cpu=1' },
      { command: ['sh', '-c', `${waitForGo}; echo 'done b'`], resources: 'cpu=1' },
      { command: ['sh', '-c', waitForGo], resources: 'cpu=2' },
    ]);
    const ids = staged.runs.map((run) => run.id);
    const [a, b, silent] = ids as [string, string, string];
    const worker = spawnCliWorker(queue, ['-r', 'cpu=4', '--concurrency', '3', '--name', 'full'], server!.url);
    for (const id of ids) await worker.waitForMessage(`Run ${id} started`);

    const lift = await fillUp(server!.url);
    writeFileSync(go, '');
    // What Redis refuses is kept and tried again: the output first, then the end.
    for (const id of [a, b]) await worker.waitForMessage(new RegExp(`^Could not store output of run ${id} yet; retrying until Redis takes it: OOM`));
    await worker.waitForMessage(new RegExp(`^Could not record the end of run ${silent} yet; retrying until Redis takes it: OOM`));
    // Meanwhile Redis still says both run here, their capacity reserved.
    const keys = namespaceKeys(queue);
    for (const id of ids) expect(await redis.hget(keys.run(id), 'status')).toBe('running');
    expect(await redis.hget(keys.worker('full').free, 'cpu')).toBe('0');

    await lift();
    for (const [id, output] of [[a, ['done a']], [b, ['done b']], [silent, []]] as const) {
      expect(await client.waitForEnd(id)).toMatchObject({ status: 'completed', exitCode: 0, worker: 'full', epoch: 1 });
      const lines = (await client.readLog(id)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));
      expect(lines).toEqual(output);
    }
    expect(await redis.hget(keys.worker('full').free, 'cpu')).toBe('4');
    expect(await redis.smembers(keys.worker('full').runs)).toEqual([]);

    // The worker claims again.
    const next = (await client.stage({ command: ['true'], resources: 'cpu=4' })).runs[0]!.id;
    expect(await client.waitForEnd(next)).toMatchObject({ status: 'completed' });
    expect(worker.messages().filter((message) => /lost|not recorded/.test(message))).toEqual([]);
    process.kill(worker.pid, 'SIGTERM');
    expect(await worker.exited).toEqual({ exitCode: 0, signal: undefined });
  });
});

describe('a run Redis no longer holds for its worker', () => {
  it('is stopped by its worker at the next heartbeat that finds it missing, its capacity given back', async () => {
    const { queue, client, redis } = await ownRedis();
    const id = (await client.stage({ command: ['sleep', '60'], resources: 'cpu=1' })).runs[0]!.id;
    const worker = spawnCliWorker(queue, ['-r', 'cpu=2', '--name', 'forgot', '--lease', '3', '--kill-grace', '1'], server!.url);
    await worker.waitForMessage(`Run ${id} started`);

    // The claim as Redis's worker set knows it is gone (a failover that lost it, or a hand edit).
    const keys = namespaceKeys(queue);
    expect(await redis.srem(keys.worker('forgot').runs, id)).toBe(1);
    await worker.waitForMessage(`Run ${id} is no longer held for this worker in Redis (its claim was lost or removed); stopping it`);
    const run = await client.waitForEnd(id);
    expect(run).toMatchObject({ status: 'lost', reason: 'Redis no longer holds it for its worker (its claim was lost or removed)' });
    expect(await redis.hget(keys.worker('forgot').free, 'cpu')).toBe('2');
    process.kill(worker.pid, 'SIGTERM');
    expect(await worker.exited).toEqual({ exitCode: 0, signal: undefined });
  });
});
