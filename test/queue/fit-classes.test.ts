/**
 * The fit indexes of worker classes (lua/includes/classes/): a claim walks
 * only the shapes that can ever fit its worker, brought up to date from the
 * group logs in bounded steps (`indexing` replies), and still starts runs
 * in the order they were staged; an index that expired, a group begun
 * before fitq kept logs, a pool that comes to hold one of the worker's
 * resources and entries written by hand change none of that.
 */
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { Scripts } from '../../src/queue/scripts.js';
import { namespaceKey } from '../../src/queue/keys.js';
import type { WorkerRegistration } from '../../src/queue/worker-calls.js';
import { claimSettled, commandsDuring } from '../support/claim-cost.js';
import { connectClient, newQueue } from '../support/fitq.js';
import { startRedisServer } from '../support/redis-server.js';

const registrationOf = (name: string, resources: string): WorkerRegistration => ({
  name, token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources,
});

/** Stages one run per demand, in order, in chunks; gives their ids. */
async function stageEach(client: FitqClient, demands: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < demands.length; i += 500) {
    const { runs } = await client.stage(demands.slice(i, i + 500).map((resources) => ({ command: ['true'], resources })));
    ids.push(...runs.map((run) => run.id));
  }
  return ids;
}

/** Every key of a worker class's fit indexes in the namespace. */
async function fitKeys(client: FitqClient): Promise<string[]> {
  const pattern = namespaceKey(client.keys.base, 'fitGroup', '*').replace(/[{}]/g, '\\$&');
  return client.redis.keys(pattern);
}

describe('a worker class\'s fit index', () => {
  it('catches up with many staged shapes in bounded steps, then starts the runs that fit in the order they were staged', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker(registrationOf('w', 'cpu=4'))).toBe(true);
    // 600 shapes too big for the worker, with a run it can start after every 200 of them.
    const demands = Array.from({ length: 603 }, (_, i) => (i % 201 === 200 ? 'cpu=1' : `cpu=${5 + i}`));
    const ids = await stageEach(client, demands);
    const runnable = ids.filter((_, i) => demands[i] === 'cpu=1');
    const first = await claimSettled(scripts);
    // 603 changed shapes, 256 per claim.
    expect(first.indexing).toBe(2);
    expect(first.result).toMatchObject({ code: 'claimed', runId: runnable[0] });
    for (const id of runnable.slice(1)) expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'claimed', runId: id });
    // The index holds the shapes that fit (none are staged now) and its end.
    expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'idle' });
    const [fitKey] = await fitKeys(client);
    expect(await client.redis.zrange(fitKey!, 0, -1)).toEqual(['']);
    // A worker of the same class shares the index: nothing to catch up with.
    await stageEach(client, ['cpu=2']);
    expect(await scripts.registerWorker(registrationOf('twin', 'cpu=4'))).toBe(true);
    expect(await scripts.claimRun('twin', 'tok', 0)).toMatchObject({ code: 'claimed' });
  });

  it('is built again from the logs once it expired, and a group begun before logs is walked itself', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker(registrationOf('w', 'cpu=4 mem=4'))).toBe(true);
    const ids = await stageEach(client, ['cpu=9', 'cpu=1', 'cpu=2', 'mem=9', 'mem=1', 'mem=2']);
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed', runId: ids[1] });
    // Expired (as after a week unused): the claim sees the index gone and builds it again.
    for (const key of await fitKeys(client)) await client.redis.del(key);
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed', runId: ids[2] });
    // The mem group's log as an older fitq left it (none): its shapes are walked in the group.
    await client.redis.del(namespaceKey(client.keys.base, 'groupLog', 'mem'));
    for (const key of await client.redis.keys(`${client.keys.base.replace(/[{}]/g, '\\$&')}fit*`)) await client.redis.del(key);
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed', runId: ids[4] });
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed', runId: ids[5] });
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'idle' });
  });

  it('knows a shape too big for the worker may fit once the pool holds that resource too', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker(registrationOf('w', 'lic=1 cpu=1'))).toBe(true);
    const [big] = await stageEach(client, ['lic=3']);
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'idle' });
    await client.setPool('lic=4');
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed', runId: big });
  });

  it('passes over log members and keys written by hand', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker(registrationOf('w', 'cpu=2'))).toBe(true);
    const ids = await stageEach(client, ['cpu=1', 'cpu=3', 'cpu=2']);
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed', runId: ids[0] });
    await scripts.finishRun({ runId: ids[0]!, worker: 'w', token: 'tok', epoch: '1', status: 'completed', exitCode: 0, reason: 'exit code 0' });
    const logKey = namespaceKey(client.keys.base, 'groupLog', 'cpu');
    await client.redis.zadd(logKey, '+inf', 'no shape', '+inf', 'mem=1', '+inf', 'cpu=0.5', '+inf', 'q'.repeat(10_000));
    const [fitKey] = await fitKeys(client);
    const classId = fitKey!.slice(fitKey!.lastIndexOf(':') + 1, fitKey!.indexOf('|'));
    await client.redis.set(namespaceKey(client.keys.base, 'fitClass', classId), 'x');
    await client.redis.del(fitKey!);
    await client.redis.set(fitKey!, 'x');
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed', runId: ids[2] });
    // cpu=3 never fits: once the claim caught up with cpu=2 gone, the index holds its end only.
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'idle' });
    expect(await client.redis.zrange(fitKey!, 0, -1)).toEqual(['']);
  });
});

describe('arrays with a limit', () => {
  /** Stages `count` arrays of `runs` runs of cpu=1, each limited to 1 at once; gives each array's run ids. */
  async function stageArrays(client: FitqClient, count: number, runs = 2): Promise<string[][]> {
    const arrays: string[][] = [];
    for (let i = 0; i < count; i++) {
      const staged = await client.stage({ command: ['true'], resources: 'cpu=1', array: { indices: Array.from({ length: runs }, (_, j) => j), limit: 1 } });
      arrays.push(staged.runs.map((run) => run.id));
    }
    return arrays;
  }

  /** The Redis commands (beside scripts) of one claim that starts nothing more, with `count` arrays at their limit (counted by a server of its own). */
  async function commandsAtLimit(url: string, count: number): Promise<number> {
    const client = await connectClient(newQueue(), url);
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker(registrationOf('w', 'cpu=100000'))).toBe(true);
    const arrays = await stageArrays(client, count);
    // The first run of each array starts; then each array is at its limit.
    for (const ids of arrays) expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed', runId: ids[0] });
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'waiting' });
    const calls = await commandsDuring(client.redis, async () =>
      expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'waiting' }));
    await client.close();
    return calls;
  }

  it('of the same demands are one group, and those at their limit cost a claim nothing', async () => {
    const server = await startRedisServer();
    try {
      const one = await commandsAtLimit(server.url, 1);
      expect(one).toBeGreaterThan(5);
      expect(await commandsAtLimit(server.url, 100)).toBe(one);
    } finally {
      await server.dispose();
    }
  });

  it('start their next run once one of theirs ends, in the order they were staged', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker(registrationOf('w', 'cpu=100000'))).toBe(true);
    const [first, second] = await stageArrays(client, 2, 3);
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed', runId: first![0] });
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed', runId: second![0] });
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'waiting' });
    const finish = (runId: string) =>
      scripts.finishRun({ runId, worker: 'w', token: 'tok', epoch: '1', status: 'completed', exitCode: 0, reason: 'exit code 0' });
    await finish(second![0]!);
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed', runId: second![1] });
    await finish(first![0]!);
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed', runId: first![1] });
    // A limit raised lets the array's next run start at once.
    await client.setPool(`array.${(await client.getRun(first![1]!))!.array}=2`);
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed', runId: first![2] });
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'waiting' });
  });

  it('are started from a group an older fitq indexed them in (their limit among its names), and move to their own', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker(registrationOf('w', 'cpu=100000'))).toBe(true);
    const [ids] = await stageArrays(client, 1, 2);
    const shape = (await client.redis.hget(client.keys.run(ids![0]!), 'shape'))!;
    // (Its demands' names, the rest of the shape left out: `;u=<user>`.)
    const older = shape.replace(/;.*$/, '').replace(/=[^,;]*/g, '');
    expect(older).toMatch(/^array\.[0-9a-f]{12},cpu$/);
    // As an older fitq left it: the shape in the group of all its names, with no log.
    const score = (await client.redis.zscore(client.keys.group('cpu'), shape))!;
    await client.redis.zrem(client.keys.group('cpu'), shape);
    await client.redis.del(namespaceKey(client.keys.base, 'groupLog', 'cpu'));
    await client.redis.hdel(client.keys.groups, 'cpu');
    await client.redis.zadd(client.keys.group(older), score, shape);
    await client.redis.hset(client.keys.groups, older, '1');
    // The first claim moves the shape to its own group, and says its runs wait; the next starts it.
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'waiting' });
    expect(Object.keys(await client.redis.hgetall(client.keys.groups))).toEqual(['cpu']);
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed', runId: ids![0] });
    await scripts.finishRun({ runId: ids![0]!, worker: 'w', token: 'tok', epoch: '1', status: 'completed', exitCode: 0, reason: 'exit code 0' });
    expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed', runId: ids![1] });
    expect(Object.keys(await client.redis.hgetall(client.keys.groups))).toEqual([]);
  });
});
