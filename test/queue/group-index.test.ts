/**
 * The index of groups of shapes (`groups`, `group:<names>`) that claims walk
 * instead of every shape: each group lists its shapes with the score of
 * their first staged run, and goes with its last shape, whichever script
 * takes that run out (claim, cancel, remove, re-staging, catching up with
 * BullMQ). Claims walking it still take runs in order across groups, and
 * pass over the shapes of groups a worker cannot run.
 */
import { describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import { Scripts } from '../../src/queue/scripts.js';
import type { WorkerRegistration } from '../../src/queue/worker-calls.js';
import { shapeOf } from '../../src/model/stage.js';
import { parseResourceSpec } from '../../src/resources/spec.js';
import { openRunQueue } from '../support/bullmq.js';
import { claimSettled, commandsDuring } from '../support/claim-cost.js';
import { connectClient, newQueue, stagedShape } from '../support/fitq.js';
import { prng } from '../support/prng.js';
import { startRedisServer } from '../support/redis-server.js';

const registrationOf = (name: string, resources: string): WorkerRegistration => ({
  name, token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources,
});

/** The index as it is: group -> its shapes with their scores (versions aside). */
async function groupIndex(client: FitqClient): Promise<Record<string, Record<string, string>>> {
  const index: Record<string, Record<string, string>> = {};
  for (const group of Object.keys(await client.redis.hgetall(client.keys.groups)).sort()) {
    const flat = await client.redis.zrange(client.keys.group(group), 0, -1, 'WITHSCORES');
    index[group] = {};
    for (let i = 0; i < flat.length; i += 2) index[group][flat[i]!] = flat[i + 1]!;
  }
  return index;
}

/** What the index should be, from the staged indexes themselves. */
async function expectedIndex(client: FitqClient, shapes: readonly string[]): Promise<Record<string, Record<string, string>>> {
  const index: Record<string, Record<string, string>> = {};
  for (const shape of shapes) {
    const first = await client.redis.zrange(client.keys.staged(shape), 0, 0, 'WITHSCORES');
    if (first.length === 0) continue;
    const group = shape.split(';')[0] === 'none' ? 'none' : [...shape.split(';')[0]!.matchAll(/([^,=]+)=/g)].map((m) => m[1]).join(',');
    (index[group] ??= {})[shape] = first[1]!;
  }
  return Object.fromEntries(Object.entries(index).sort(([a], [b]) => (a < b ? -1 : 1)));
}

const version = async (client: FitqClient, group: string) => client.redis.hget(client.keys.groups, group);

describe('the index of groups', () => {
  it('follows its shapes: a group comes with its first shape and goes with its last, its version changing with its runs', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const stage = async (resources: string, extra: { gpus?: string; retries?: number; priority?: number } = {}) =>
      (await client.stage({ command: ['true'], resources, ...extra })).runs[0]!.id;
    const shapes = ['cpu=1', 'cpu=2', 'cpu=1,mem=1', 'none', 'gpu=1;gpus=0', 'gpu=1'].map(stagedShape);
    const check = async () => expect(await groupIndex(client)).toEqual(await expectedIndex(client, shapes));

    const first = await stage('cpu=1');
    const v1 = await version(client, 'cpu');
    const second = await stage('cpu=1', { retries: 1 });
    expect(await version(client, 'cpu')).not.toBe(v1);
    const big = await stage('cpu=2');
    const both = await stage('cpu=1 mem=1');
    const bare = await stage('');
    const pinned = await stage('gpu=1', { gpus: '0' });
    // A higher priority staged later comes first in its shape, and in its group.
    const urgent = await stage('gpu=1', { priority: 5 });
    await check();
    expect(Object.keys(await groupIndex(client))).toEqual(['cpu', 'cpu,mem', 'gpu', 'none']);
    expect(Object.keys((await groupIndex(client)).gpu!)).toEqual([stagedShape('gpu=1'), stagedShape('gpu=1;gpus=0')]);

    // Canceled while staged: the shape's next run is its first.
    let before = await version(client, 'cpu');
    await client.cancelRun(first);
    expect(await version(client, 'cpu')).not.toBe(before);
    await check();
    // Claimed: a worker without devices takes the unpinned gpu run first (higher priority), then the rest.
    expect(await scripts.registerWorker(registrationOf('w', 'cpu=2 mem=1 gpu=1'))).toBe(true);
    for (const id of [urgent, second]) {
      expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'claimed', runId: id });
      await check();
    }
    expect((await groupIndex(client)).gpu).toEqual({ [stagedShape('gpu=1;gpus=0')]: expect.any(String) });
    // Re-staged (its worker was stopped under it, a retry left): back in its shape and group, at its place.
    before = await version(client, 'cpu');
    const stopped = { runId: second, worker: 'w', token: 'tok', epoch: '1', status: 'stopped' as const, reason: 'its worker w was stopped' };
    expect(await scripts.finishRun(stopped)).toEqual({ outcome: 'recorded', status: 'staged' });
    expect(await version(client, 'cpu')).not.toBe(before);
    expect((await groupIndex(client)).cpu![stagedShape('cpu=1')]).toBe(await client.redis.hget(client.keys.run(second), 'score'));
    await check();
    // Removed: `fitq runs rm` of a staged run; deleted from BullMQ and caught up with.
    await client.removeRuns([big]);
    await check();
    await openRunQueue(client).remove(bare);
    await client.reconcile();
    expect(await groupIndex(client)).not.toHaveProperty('none');
    await check();
    for (const id of [second, both, pinned]) await client.cancelRun(id);
    expect(await groupIndex(client)).toEqual({});
    expect(await client.redis.exists(client.keys.groups)).toBe(0);
    await scripts.deregisterWorker('w', 'tok');
  });
});

describe('claims walking the index of groups', () => {
  it('take the runs a worker can run in order across groups, and none it cannot', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const random = prng(0x9a0b);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    // Groups the worker can run (more shapes than a claim reads at once), one it lacks (foo), shapes beyond its capacity.
    const specs: string[] = [];
    for (let i = 0; i < 120; i++) {
      specs.push(pick([
        `cpu=${pick([1, 2, 3, 5])}.${Math.floor(random() * 40)}`,
        `cpu=1 mem=${1 + Math.floor(random() * 30)}`,
        `mem=${1 + Math.floor(random() * 30)}`,
        `foo=${1 + Math.floor(random() * 30)}`,
        '',
      ]));
    }
    const staged: { id: string; resources: string; priority: number }[] = [];
    for (const resources of specs) {
      const priority = pick([0, 0, 0, 1, -1]);
      staged.push({ id: (await client.stage({ command: ['true'], resources, priority })).runs[0]!.id, resources, priority });
    }
    const capacity = new Map([['cpu', 4_000_000n], ['mem', 25_000_000n]]);
    const runnable = (resources: string) =>
      [...parseResourceSpec(resources)].every(([name, micros]) => capacity.has(name) && micros <= capacity.get(name)!);
    // Higher priority first, then staging order.
    const expected = staged
      .map((run, seq) => ({ ...run, seq }))
      .filter((run) => runnable(run.resources))
      .sort((a, b) => b.priority - a.priority || a.seq - b.seq)
      .map((run) => run.id);

    expect(await scripts.registerWorker(registrationOf('w', 'cpu=4 mem=25'))).toBe(true);
    const claimed: string[] = [];
    for (;;) {
      const result = await scripts.claimRun('w', 'tok', 0);
      if (result.code !== 'claimed') {
        expect(result).toMatchObject({ code: 'idle', ignored: [expect.objectContaining({ group: 'foo', missing: ['foo'] })] });
        break;
      }
      claimed.push(result.runId);
      await scripts.finishRun({ runId: result.runId, worker: 'w', token: 'tok', epoch: '1', status: 'completed', exitCode: 0, reason: 'exit code 0' });
    }
    expect(claimed).toEqual(expected);
    // What is left: the runs it cannot run, their shapes still indexed.
    const left = staged.filter((run) => !runnable(run.resources));
    expect(left.length).toBeGreaterThan(10);
    expect(new Set(Object.keys(await groupIndex(client)))).toEqual(new Set(left.map((run) => shapeOf(parseResourceSpec(run.resources)).replace(/=[^,]*/g, ''))));
    await scripts.deregisterWorker('w', 'tok');
  });

  it('pass over a group none of whose runs can start beside the blocked head, and still start a later run of another group', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker(registrationOf('w', 'cpu=2 mem=1'))).toBe(true);
    const running = (await client.stage({ command: ['true'], resources: 'cpu=1' })).runs[0]!.id;
    expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'claimed', runId: running });
    const head = (await client.stage({ command: ['true'], resources: 'cpu=2' })).runs[0]!.id;
    // Beside the head nothing of cpu may go: every other cpu shape waits, in its group and with mem.
    for (let i = 1; i <= 40; i++) await client.stage({ command: ['true'], resources: `cpu=0.${String(i).padStart(2, '0')}` });
    await client.stage({ command: ['true'], resources: 'cpu=0.5 mem=1' });
    const later = (await client.stage({ command: ['true'], resources: 'mem=1' })).runs[0]!.id;
    expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'claimed', runId: later });
    expect(await client.redis.hgetall(client.keys.holds)).toEqual({ [head]: 'w' });
    expect(await scripts.claimRun('w', 'tok', 0)).toEqual({ code: 'waiting', ignored: [], holding: head, preempting: [] });
    await scripts.deregisterWorker('w', 'tok');
  });
});

describe('the cost of a claim', () => {
  /**
   * The Redis commands one claim runs (counted by a server of its own): a
   * worker running a cpu=1 run, with cpu=1 runs waiting behind it (the first
   * its blocked head), and the runs of `extra` staged after them.
   */
  async function claimCommands(url: string, extra: readonly string[]): Promise<number> {
    const client = await FitqClient.connect({ redisUrl: url, queue: newQueue() });
    try {
      const scripts = new Scripts(client.redis, client.keys, 100);
      expect(await scripts.registerWorker(registrationOf('w', 'cpu=1'))).toBe(true);
      await client.stage({ command: ['true'], resources: 'cpu=1', repeat: 3 });
      expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'claimed' });
      for (let i = 0; i < extra.length; i += 500) {
        await client.stage(extra.slice(i, i + 500).map((resources) => ({ command: ['true'], resources })));
      }
      // Once to load the script and bring the worker's fit index up to date, then counted.
      expect((await claimSettled(scripts)).result).toMatchObject({ code: 'waiting' });
      const calls = await commandsDuring(client.redis, async () =>
        expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'waiting' }));
      await client.redis.flushall();
      return calls;
    } finally {
      await client.close();
    }
  }

  it('is the same with 1,000 shapes of a group the worker lacks, or of a group none of whose runs can start beside its head, as with one', async () => {
    const server = await startRedisServer();
    try {
      expect(await claimCommands(server.url, [])).toBeGreaterThan(5);
      const lacking = Array.from({ length: 1000 }, (_, i) => `foo=${i + 1}`);
      expect(await claimCommands(server.url, lacking)).toBe(await claimCommands(server.url, lacking.slice(0, 1)));
      const blocked = Array.from({ length: 1000 }, (_, i) => `cpu=0.${String(i + 1).padStart(4, '0')}`);
      expect(await claimCommands(server.url, blocked)).toBe(await claimCommands(server.url, blocked.slice(0, 1)));
    } finally {
      await server.dispose();
    }
  });

  /**
   * The Redis commands one claim runs for a cpu=4 worker starting a cpu=1
   * run, with the runs of `older` (shapes too big for it) staged before
   * every run it can start.
   */
  async function startCommands(url: string, older: readonly string[]): Promise<number> {
    const client = await FitqClient.connect({ redisUrl: url, queue: newQueue() });
    try {
      const scripts = new Scripts(client.redis, client.keys, 100);
      expect(await scripts.registerWorker(registrationOf('w', 'cpu=4'))).toBe(true);
      for (let i = 0; i < older.length; i += 500) {
        await client.stage(older.slice(i, i + 500).map((resources) => ({ command: ['true'], resources })));
      }
      await client.stage({ command: ['true'], resources: 'cpu=1', repeat: 3 });
      expect((await claimSettled(scripts)).result).toMatchObject({ code: 'claimed' });
      const calls = await commandsDuring(client.redis, async () =>
        expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'claimed' }));
      await client.redis.flushall();
      return calls;
    } finally {
      await client.close();
    }
  }

  it('is the same with 1,000 or 5,000 shapes too big for the worker staged before the runs it starts, as with one', async () => {
    const server = await startRedisServer();
    try {
      const tooBig = (count: number) => Array.from({ length: count }, (_, i) => `cpu=${5 + i}`);
      const one = await startCommands(server.url, tooBig(1));
      expect(one).toBeGreaterThan(5);
      expect(await startCommands(server.url, tooBig(1000))).toBe(one);
      expect(await startCommands(server.url, tooBig(5000))).toBe(one);
    } finally {
      await server.dispose();
    }
  });
});
