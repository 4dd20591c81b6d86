/**
 * Entries fitq never writes, put in its indexes by hand with a plain Redis
 * client (anyone with write access could): members of the staged indexes
 * that are no run id, whose key is no job hash, or whose job is of another
 * shape or state or is gone; members of `shapes` that are no shape or have no
 * index; holds on no staged run. Claims drop them (a bounded number per
 * call) and go on in order, never failing half done, and capacity is left
 * exactly as it was; explaining why runs wait works throughout.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { namespaceKey, type NamespaceKeys } from '../../src/queue/keys.js';
import { Scripts } from '../../src/queue/scripts.js';
import type { ClaimResult } from '../../src/queue/claim-reply.js';
import type { WorkerRegistration } from '../../src/queue/worker-calls.js';
import { connectClient, indexedShapes, newQueue, redisUrl, stagedShape } from '../support/fitq.js';

const registrationOf = (name: string, resources: string, devices: number[] = []): WorkerRegistration => ({
  name, token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources, devices,
});

const plainClients: Redis[] = [];
afterEach(async () => {
  await Promise.all(plainClients.splice(0).map((redis) => redis.quit()));
});

/** A Redis connection of its own, as a hostile writer would use. */
function plainClient(): Redis {
  const redis = new Redis(redisUrl());
  plainClients.push(redis);
  return redis;
}

/** What a claim may change: the worker's free capacity and devices, the pool's use. */
async function capacity(client: FitqClient, worker: string): Promise<unknown> {
  const w = client.keys.worker(worker);
  return {
    free: await client.redis.hgetall(w.free),
    devices: await client.redis.hgetall(w.devices),
    // (A resource nothing uses may be absent or 0.)
    pool: Object.fromEntries(Object.entries(await client.redis.hgetall(client.keys.poolUsed)).filter(([, used]) => used !== '0')),
    running: await client.redis.smembers(w.runs),
  };
}

/**
 * Writes hostile members into a staged index, each scored before every real
 * run, and the keys they name; returns them.
 */
async function poison(redis: Redis, keys: NamespaceKeys, shape: string, ids: { ended: string; otherShape: string }): Promise<string[]> {
  // (Named by the shape's demands: `;u=<user>` left out.)
  const tag = shape.replace(/;u=.*$/, '').replace(/[^a-z0-9]/g, '');
  const stream = `strm${tag}`;
  const text = `str${tag}`;
  const list = `lst${tag}`;
  await redis.xadd(keys.run(stream), '*', 'a', 'b');
  await redis.set(keys.run(text), 'x');
  await redis.rpush(keys.run(list), 'x');
  // The claim used to take this one, lower `free`, then fail on its epoch: capacity leaked on every try.
  await redis.hset(keys.run('t7:log'), 'status', 'staged', 'shape', shape, 'epoch', 'x');
  const members = ['t7:log', 'a b', '{x}', '', 'ghost', stream, text, list, ids.ended, ids.otherShape, 'z'.repeat(100_000), `${'y'.repeat(129)}`];
  for (const member of members) await redis.zadd(keys.staged(shape), 0, member);
  return members;
}

/** A member as a failed expectation shows it: a huge one cut short. */
const short = (member: string) => (member.length > 40 ? `${member.slice(0, 20)}… (${member.length})` : member);

async function claim(scripts: Scripts, worker: string): Promise<ClaimResult> {
  return scripts.claimRun(worker, 'tok', 0);
}

describe('a claim among hostile index entries', () => {
  it('drops them, never fails, leaves capacity as it was, and claims the real runs in order', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const scripts = new Scripts(client.redis, client.keys, 100);
    const { keys } = client;
    await client.setPool('lic=1');
    const stage = async (resources: string, runId: string) => (await client.stage({ command: ['true'], resources, runId })).runs[0]!.id;
    const ended = await stage('cpu=1', 'ended');
    await client.cancelRun(ended);
    const a = await stage('cpu=1 gpu=1', 'a');
    const b = await stage('cpu=1 lic=1', 'b');
    const c = await stage('cpu=1', 'c');
    const big = await stage('cpu=2', 'big');
    const lacking = await stage('mem=1', 'lacking');
    expect(await scripts.registerWorker(registrationOf('w', 'cpu=2 gpu=1', [0]))).toBe(true);
    expect(await scripts.registerWorker(registrationOf('other', 'cpu=1'))).toBe(true);

    const redis = plainClient();
    const shapes = ['cpu=1,gpu=1', 'cpu=1,lic=1', 'cpu=1', 'cpu=2', 'mem=1'].map(stagedShape);
    for (const shape of shapes) await poison(redis, keys, shape, { ended, otherShape: shape === stagedShape('cpu=2') ? c : big });
    // Members of a group that are no shape of it, or whose index is missing or no sorted set;
    // fields of `groups` that are no group, or whose key is no sorted set.
    await redis.set(keys.staged('cpu=0.5'), 'x');
    await redis.zadd(keys.group('cpu'), 0, 'foo', 0, 'gpu=1', 0, 'cpu=0.5', 0, 'cpu=1.5', 0, 'q'.repeat(100_000));
    await redis.set(keys.group('gpu'), 'x');
    await redis.hset(keys.groups, 'x y', '1', 'q'.repeat(100_000), '1', 'gpu', '1', 'cpu', 'by-hand');
    // Claims walk the cpu group itself, as one begun before fitq kept group logs (a worker class's
    // fit index holds only the shapes fitq logged: it never comes to members written into the group by hand).
    await redis.del(namespaceKey(keys.base, 'groupLog', 'cpu'));
    // Holds by a live worker on no staged run: the claim must not take them for an older hold.
    for (const id of ['t7:log', 'strmcpu1', 'ghost', ended, 'a b']) await redis.hset(keys.holds, id, 'other');

    const before = await capacity(client, 'w');
    // Explaining works among them.
    const listed = await client.listRuns({ statuses: ['staged'] });
    const claimable = 'waiting for a worker to claim it';
    expect(listed.map((run) => [run.id, run.reason])).toEqual([
      [a, claimable], [b, claimable], [c, claimable], [big, claimable], [lacking, 'no live worker has: mem'],
    ]);

    expect(await claim(scripts, 'w')).toMatchObject({ code: 'claimed', runId: a });
    expect(await client.getRun(a)).toMatchObject({ status: 'running', epoch: 1, devices: [0] });
    expect(await claim(scripts, 'w')).toMatchObject({ code: 'claimed', runId: b });
    // cpu is all taken: c is the blocked head; `lacking` is ignored (no mem).
    const waiting = await claim(scripts, 'w');
    expect(waiting).toMatchObject({ code: 'waiting', holding: c });
    expect(waiting.code === 'waiting' && waiting.ignored.map((entry) => entry.group)).toEqual(['mem']);
    for (let i = 0; i < 5; i++) expect(await claim(scripts, 'w')).toMatchObject({ code: 'waiting', holding: c });

    // Every hostile entry the claims came to is gone; the real runs are where they were.
    const left = async (shape: string) => (await redis.zrange(keys.staged(shape), 0, -1)).map(short);
    for (const shape of ['cpu=1,gpu=1', 'cpu=1,lic=1', 'cpu=1'].map(stagedShape)) {
      const real = { [stagedShape('cpu=1')]: [c] }[shape] ?? [];
      expect({ shape, left: await left(shape) }).toEqual({ shape, left: real });
    }
    // A shape after the blocked head none of whose runs can start now is not looked into yet,
    // nor one this worker cannot run: what they hold goes when a claim comes to them.
    expect(await left(stagedShape('cpu=2'))).toContain(big);
    expect(await left(stagedShape('mem=1'))).toContain(lacking);
    expect(Object.keys(await redis.hgetall(keys.groups)).sort()).toEqual(['cpu', 'mem']);
    expect(await indexedShapes(client)).toEqual(['cpu=1', 'cpu=2', 'mem=1'].map(stagedShape));
    expect(await redis.hgetall(keys.holds)).toEqual({ [c]: 'w' });
    // The keys they named are left as they were: not fitq's.
    expect(await redis.type(keys.run('strmcpu1'))).toBe('stream');
    expect(await redis.hget(keys.run('t7:log'), 'epoch')).toBe('x');

    for (const id of [a, b]) {
      await scripts.finishRun({ runId: id, worker: 'w', token: 'tok', epoch: '1', status: 'completed', exitCode: 0, reason: 'exit code 0' });
    }
    expect(await capacity(client, 'w')).toEqual(before);
    expect(await claim(scripts, 'w')).toMatchObject({ code: 'claimed', runId: c });
    expect(await claim(scripts, 'w')).toMatchObject({ code: 'waiting', holding: big });
    expect(await left(stagedShape('cpu=2'))).toEqual([big]);
    expect((await client.listRuns({ statuses: ['staged'] })).map((run) => [run.id, run.reason])).toEqual([
      [big, 'next in line on w: waiting for cpu=2 > 1 free'], [lacking, 'no live worker has: mem'],
    ]);
    expect(await scripts.registerWorker(registrationOf('m', 'mem=1'))).toBe(true);
    const memBefore = await capacity(client, 'm');
    expect(await claim(scripts, 'm')).toMatchObject({ code: 'claimed', runId: lacking });
    expect(await left(stagedShape('mem=1'))).toEqual([]);
    await scripts.finishRun({ runId: lacking, worker: 'm', token: 'tok', epoch: '1', status: 'completed', exitCode: 0, reason: 'exit code 0' });
    expect(await capacity(client, 'm')).toEqual(memBefore);
  });

  it('keeps order when there are more hostile entries than one claim drops', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const scripts = new Scripts(client.redis, client.keys, 100);
    const { keys } = client;
    const first = (await client.stage({ command: ['true'], resources: 'cpu=1', runId: 'first' })).runs[0]!.id;
    const second = (await client.stage({ command: ['true'], resources: 'mem=1', runId: 'second' })).runs[0]!.id;
    expect(await scripts.registerWorker(registrationOf('w', 'cpu=1 mem=1'))).toBe(true);
    const redis = plainClient();
    for (let i = 0; i < 250; i++) await redis.zadd(keys.staged(stagedShape('cpu=1')), 0, `bad:${i}`);

    const before = await capacity(client, 'w');
    const results: string[] = [];
    for (let i = 0; i < 5 && results.length < 2; i++) {
      const result = await claim(scripts, 'w');
      expect(await capacity(client, 'w')).toEqual(result.code === 'claimed' ? expect.anything() : before);
      if (result.code === 'claimed') results.push(result.runId);
    }
    // `second` never starts before `first`, though first's index is flooded.
    expect(results).toEqual([first, second]);
    expect(await redis.zcard(keys.staged(stagedShape('cpu=1')))).toBe(0);
  });
});

describe('the other scripts reading what a hostile writer put in', () => {
  it('heartbeat, reconciling with BullMQ and a worker going ignore it and do their work', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const scripts = new Scripts(client.redis, client.keys, 100);
    const { keys } = client;
    const run = (await client.stage({ command: ['true'], resources: 'cpu=1', runId: 'real' })).runs[0]!.id;
    expect(await scripts.registerWorker(registrationOf('w', 'cpu=1'))).toBe(true);
    expect(await claim(scripts, 'w')).toMatchObject({ code: 'claimed', runId: run });

    const redis = plainClient();
    await redis.xadd(keys.run('strm'), '*', 'a', 'b');
    await redis.hset(keys.run('t7:log'), 'status', 'running', 'worker', 'w');
    // The worker's own set of runs, a staged index, and BullMQ's events naming them.
    await redis.sadd(keys.worker('w').runs, 'strm', 't7:log', 'a b');
    await redis.zadd(keys.staged(stagedShape('cpu=1')), 0, 'strm');
    await redis.zadd(keys.group('cpu'), 0, 'foo', 0, 'cpu=3');
    await redis.set(keys.staged('cpu=3'), 'x');
    await redis.set(keys.group('mem'), 'x');
    await redis.hset(keys.groups, 'x y', '1', 'mem', '1');
    await redis.xadd(keys.queue.key('events'), '*', 'event', 'added', 'jobId', 'strm');
    await redis.xadd(keys.queue.key('events'), '*', 'event', 'removed', 'jobId', 't7:log');

    expect(await scripts.heartbeat('w', 'tok', 60_000)).toEqual({ cancels: [], held: [{ runId: run, epoch: '1' }], drained: false, preempting: [] });
    expect(await redis.smembers(keys.worker('w').runs)).toEqual([run]);
    await expect(client.reconcile()).resolves.toEqual([]);
    // The worker goes with its run: lost, and its keys with it.
    await redis.sadd(keys.worker('w').runs, 'strm', 't7:log');
    expect(await scripts.deregisterWorker('w', 'tok')).toBe(true);
    expect(await client.getRun(run)).toMatchObject({ status: 'lost' });
    expect(await redis.exists(keys.worker('w').runs, keys.worker('w').info)).toBe(0);
  });
});
