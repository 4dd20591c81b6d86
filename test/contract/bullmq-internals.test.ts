/**
 * Contract: the BullMQ internals fitq's own Lua scripts write and rely on.
 *
 * fitq writes BullMQ's data model itself, from its Lua scripts, and lets
 * BullMQ's API (and Bull Board, which reads through it) show it:
 *
 * - stage: create the job hash and ZADD it to `prioritized`;
 * - claim: move it to `active` and take `<job>:lock`;
 * - finish: mark it completed/failed, XADD the events, trim retention.
 *
 * Every test below pins one thing those scripts assume, through BullMQ's
 * public API (Queue, Job, QueueEvents, and a Worker that never runs, used
 * only to take jobs with a token). Keys are laid out as fitq lays them out:
 * prefix `fitq:{ns}`, queue `runs`, so `fitq:{ns}:runs:<suffix>`. A BullMQ
 * upgrade that changes any of these must fail here before it breaks fitq.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Job, Queue, QueueEvents, Worker, type JobType, type QueueOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_KEY_NAMES } from '../../src/model/names.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

const QUEUE = 'runs';
const WORKER_NAME = 'fitq-contract';
const TWO_32 = 2 ** 32;

let server: RedisServer;
/** A plain client: the hand-written keys, as fitq's Lua writes them. */
let redis: Redis;
const toClose: { close(): Promise<unknown> }[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis({ host: '127.0.0.1', port: server.port });
});

afterAll(async () => {
  for (const instance of toClose.splice(0).reverse()) await instance.close();
  await redis?.quit();
  await server?.dispose();
});

const connection = () => ({ host: '127.0.0.1', port: server.port });

function track<T extends { close(): Promise<unknown> }>(instance: T): T {
  toClose.push(instance);
  return instance;
}

interface Namespace {
  /** `fitq:{ns}` */
  readonly prefix: string;
  /** `fitq:{ns}:runs:<suffix>` */
  key(suffix: string): string;
  readonly queue: Queue;
}

/** A fresh namespace with its Queue; its meta hash is written before this returns. */
async function namespace(options: Partial<QueueOptions> = {}): Promise<Namespace> {
  const prefix = `fitq:{c${randomBytes(5).toString('hex')}}`;
  const queue = track(new Queue(QUEUE, { connection: connection(), prefix, ...options }));
  await queue.waitUntilReady();
  await queue.getVersion(); // waits for the meta hash a new Queue writes
  return { prefix, key: (suffix) => `${prefix}:${QUEUE}:${suffix}`, queue };
}

/** A Worker that never runs: getNextJob(token) is how it takes a job, as fitq's claim would. */
function worker(ns: Namespace): Worker {
  return track(new Worker(QUEUE, null, { connection: connection(), prefix: ns.prefix, autorun: false, name: WORKER_NAME }));
}

/** QueueEvents reading the stream from its start, so no hand-written entry is missed. */
async function queueEvents(ns: Namespace): Promise<QueueEvents> {
  const events = track(new QueueEvents(QUEUE, { connection: connection(), prefix: ns.prefix, lastEventId: '0-0' }));
  await events.waitUntilReady();
  return events;
}

/** The fields every hand-written job hash gets unless a test says otherwise. */
const BASE_HASH = { name: 'run', data: '{}', opts: '{}', timestamp: '1000', delay: '0', priority: '0' };

async function writeJob(ns: Namespace, id: string, fields: Record<string, string> = {}): Promise<void> {
  await redis.hset(ns.key(id), { ...BASE_HASH, ...fields });
}

function fieldsOf(flat: string[]): Record<string, string> {
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]!] = flat[i + 1]!;
  return fields;
}

/** The events stream, as field maps, oldest first. */
async function streamEvents(ns: Namespace): Promise<Record<string, string>[]> {
  const entries = await redis.xrange(ns.key('events'), '-', '+');
  return entries.map(([, flat]) => fieldsOf(flat));
}

/** Every key of the namespace with its Redis type. */
async function keyTypes(ns: Namespace): Promise<Record<string, string>> {
  const keys = await redis.keys(`${ns.prefix}:*`); // a private test server: KEYS is fine
  const types: Record<string, string> = {};
  for (const key of keys.sort()) types[key.slice(ns.prefix.length + QUEUE.length + 2)] = await redis.type(key);
  return types;
}

/** The commands BullMQ's Lua scripts ran on this namespace while `action` ran (via MONITOR). */
async function luaCommands(ns: Namespace, action: () => Promise<unknown>): Promise<string[][]> {
  const monitor = await redis.monitor();
  const marker = `fitq-contract-end-${randomBytes(4).toString('hex')}`;
  const seen: string[][] = [];
  let ended!: () => void;
  const end = new Promise<void>((resolve) => (ended = resolve));
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (args[1] === marker) ended();
    else if (source === 'lua' && args.some((arg) => arg.startsWith(ns.prefix))) {
      seen.push([args[0]!.toUpperCase(), ...args.slice(1)]);
    }
  });
  try {
    await action();
    await redis.echo(marker);
    await end;
  } finally {
    monitor.disconnect();
  }
  return seen;
}

/** Resolves with a QueueEvents emission's arguments, or rejects after `ms`. */
async function nextEmission(events: QueueEvents, name: string, ms = 5000): Promise<unknown[]> {
  const signal = AbortSignal.timeout(ms);
  return once(events, name, { signal });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('1. key names', () => {
  it('every queue key is <prefix>:<queue>:<suffix>; these suffixes are reserved (a run id equal to one would collide)', async () => {
    // A job hash is <prefix>:<queue>:<id>: a run id such as 'meta' or 'paused'
    // would name BullMQ's own key (WRONGTYPE at best), so fitq must refuse them.
    const ns = await namespace();
    const suffixes = ['active', 'wait', 'waiting-children', 'paused', 'id', 'delayed', 'prioritized', 'stalled-check',
      'completed', 'failed', 'stalled', 'repeat', 'limiter', 'meta', 'events', 'pc', 'marker', 'de'];
    expect(ns.queue.keys).toEqual({ '': ns.key(''), ...Object.fromEntries(suffixes.map((suffix) => [suffix, ns.key(suffix)])) });
    expect(ns.key('')).toBe(`${ns.prefix}:runs:`);
    // fitq refuses exactly these as run ids.
    expect([...QUEUE_KEY_NAMES].sort()).toEqual([...suffixes].sort());
  });

  it('add, take, log and finish touch exactly these keys, of these types', async () => {
    // fitq's scripts create and read these keys by name and type: a rename or
    // a type change (e.g. marker back to a list) breaks them.
    const ns = await namespace();
    expect(await keyTypes(ns)).toEqual({ meta: 'hash' }); // a new Queue writes only meta

    await ns.queue.add('run', {}, { jobId: 'p1', priority: 1 });
    await ns.queue.add('run', {}, { jobId: 'w1' }); // priority 0: the wait list
    await ns.queue.add('run', {}, { jobId: 'd1', delay: 60_000 });
    expect(await keyTypes(ns)).toEqual({
      d1: 'hash', delayed: 'zset', events: 'stream', id: 'string', marker: 'zset', meta: 'hash',
      p1: 'hash', pc: 'string', prioritized: 'zset', w1: 'hash', wait: 'list',
    });
    // The id counter is INCRed by every add, even with a custom job id.
    expect(await redis.get(ns.key('id'))).toBe('3');

    const taker = worker(ns);
    const first = (await taker.getNextJob('tok-w1', { block: false }))!;
    expect(first.id).toBe('w1'); // the wait list is served before prioritized
    const second = (await taker.getNextJob('tok-p1', { block: false }))!;
    expect(second.id).toBe('p1');
    await second.log('hello');
    const types = await keyTypes(ns);
    expect(types).toMatchObject({ active: 'list', 'w1:lock': 'string', 'p1:lock': 'string', 'p1:logs': 'list' });
    expect(types.wait).toBeUndefined(); // an emptied list is gone, as Redis does
    expect(await redis.get(ns.key('w1:lock'))).toBe('tok-w1');
    expect(await redis.get(ns.key('p1:lock'))).toBe('tok-p1');
    expect(await redis.lrange(ns.key('p1:logs'), 0, -1)).toEqual(['hello']);

    await first.moveToCompleted('ok', 'tok-w1', false);
    await second.moveToFailed(new Error('no'), 'tok-p1', false);
    // Locks are gone; pc stays until a take finds prioritized empty (section 3).
    expect(await keyTypes(ns)).toEqual({
      completed: 'zset', d1: 'hash', delayed: 'zset', events: 'stream', failed: 'zset', id: 'string', marker: 'zset',
      meta: 'hash', p1: 'hash', 'p1:logs': 'list', pc: 'string', w1: 'hash',
    });
  });

  it('job logs are the list <jobKey>:logs, RPUSHed by job.log and read by getJobLogs (also when written by hand)', async () => {
    const ns = await namespace();
    const job = await ns.queue.add('run', {}, { jobId: 'r1', priority: 1 });
    expect(await job.log('one')).toBe(1);
    await redis.rpush(ns.key('r1:logs'), 'two');
    expect(await redis.lrange(ns.key('r1:logs'), 0, -1)).toEqual(['one', 'two']);
    expect(await ns.queue.getJobLogs('r1')).toEqual({ logs: ['one', 'two'], count: 2 });
  });
});

describe('2. job hash fields', () => {
  it('queue.add writes exactly name, data, opts (JSON), timestamp, delay and priority', async () => {
    // fitq's stage script writes the same hash; these are all BullMQ needs at add time.
    const ns = await namespace();
    const job = await ns.queue.add('run', { command: ['true'] }, { jobId: 'r1', priority: 5 });
    const hash = await redis.hgetall(ns.key('r1'));
    expect(Object.keys(hash).sort()).toEqual(['data', 'delay', 'name', 'opts', 'priority', 'timestamp']);
    expect(hash).toMatchObject({ name: 'run', data: '{"command":["true"]}', timestamp: String(job.timestamp), delay: '0', priority: '5' });
    expect(JSON.parse(hash.opts!)).toEqual({ jobId: 'r1', priority: 5, attempts: 0 });

    const read = (await ns.queue.getJob('r1'))!;
    expect(read.id).toBe('r1');
    expect(read.data).toEqual({ command: ['true'] });
    expect(read.opts.priority).toBe(5);
    expect(read.priority).toBe(5);
    expect(read.timestamp).toBe(job.timestamp);
    expect(read.delay).toBe(0);
  });

  it('Job.fromId maps a hand-written hash onto Job properties (returnvalue parsed, atm/ats/pb renamed)', async () => {
    const ns = await namespace();
    await redis.hset(ns.key('h1'), {
      name: 'run', data: '{"command":["true"]}', opts: '{"priority":3}', timestamp: '1000', delay: '0', priority: '3',
      processedOn: '2000', finishedOn: '3000', returnvalue: '{"exitCode":0}', failedReason: 'boom', atm: '2', ats: '3', pb: 'w1',
    });
    for (const job of [(await Job.fromId(ns.queue, 'h1'))!, (await ns.queue.getJob('h1'))!]) {
      expect(job.id).toBe('h1');
      expect(job.name).toBe('run');
      expect(job.data).toEqual({ command: ['true'] });
      expect(job.opts).toEqual({ attempts: 0, priority: 3 }); // attempts: 0 is added by the Job constructor
      expect(job.timestamp).toBe(1000);
      expect(job.delay).toBe(0);
      expect(job.priority).toBe(3);
      expect(job.processedOn).toBe(2000);
      expect(job.finishedOn).toBe(3000);
      expect(job.returnvalue).toEqual({ exitCode: 0 });
      expect(job.failedReason).toBe('boom');
      expect(job.attemptsMade).toBe(2);
      expect(job.attemptsStarted).toBe(3);
      expect(job.processedBy).toBe('w1');
      expect(job.progress).toBe(0);
      expect(job.stacktrace).toEqual([]);
    }
  });

  it('missing timestamp/delay/priority read as NaN; bad JSON returnvalue reads as undefined; bad JSON data throws', async () => {
    // So fitq's stage must always write timestamp, delay and priority, and data as JSON.
    const ns = await namespace();
    await redis.hset(ns.key('bare'), { name: 'run' });
    const bare = (await ns.queue.getJob('bare'))!;
    expect(bare.data).toEqual({});
    expect(bare.opts).toEqual({ attempts: 0 });
    expect(bare.timestamp).toBeNaN();
    expect(bare.delay).toBeNaN();
    expect(bare.priority).toBeNaN();
    expect(bare.returnvalue).toBeNull();

    await writeJob(ns, 'badReturn', { returnvalue: 'not json' });
    expect((await ns.queue.getJob('badReturn'))!.returnvalue).toBeUndefined();

    await writeJob(ns, 'badData', { data: 'not json' });
    await expect(ns.queue.getJob('badData')).rejects.toThrow(SyntaxError);
  });

  it('queue.add refuses an all-digit job id; a hand-written all-digit id reads back fine', async () => {
    // fitq's random hex run ids can be all digits: only queue.add refuses them.
    const ns = await namespace();
    await expect(ns.queue.add('run', {}, { jobId: '123456789012' })).rejects.toThrow('Custom Id cannot be integers');
    await writeJob(ns, '123456789012', { priority: '1' });
    await redis.zadd(ns.key('prioritized'), TWO_32 + 1, '123456789012');
    expect((await ns.queue.getJob('123456789012'))!.id).toBe('123456789012');
    expect(await ns.queue.getJobState('123456789012')).toBe('prioritized');
  });
});

describe('3. priority score encoding', () => {
  it('a prioritized job scores priority * 2^32 + INCR(pc), and BullMQ orders by that score', async () => {
    const ns = await namespace();
    await ns.queue.add('run', {}, { jobId: 'a', priority: 1 });
    await ns.queue.add('run', {}, { jobId: 'b', priority: 7 });
    await ns.queue.add('run', {}, { jobId: 'c', priority: 1 });
    expect(await redis.zrange(ns.key('prioritized'), 0, -1, 'WITHSCORES')).toEqual([
      'a', String(1 * TWO_32 + 1), 'c', String(1 * TWO_32 + 3), 'b', String(7 * TWO_32 + 2),
    ]);
    expect(await redis.get(ns.key('pc'))).toBe('3');
    expect((await ns.queue.getPrioritized()).map((job) => job.id)).toEqual(['a', 'c', 'b']);
  });

  it('a hand-staged entry shares pc with queue.add and is taken in score order', async () => {
    // fitq's stage INCRs the same pc and ZADDs the same score.
    const ns = await namespace();
    const counter = await redis.incr(ns.key('pc'));
    await writeJob(ns, 'fitq', { priority: '2' });
    await redis.zadd(ns.key('prioritized'), 2 * TWO_32 + counter, 'fitq');
    await ns.queue.add('run', {}, { jobId: 'bull', priority: 1 });
    expect(await redis.zscore(ns.key('prioritized'), 'bull')).toBe(String(1 * TWO_32 + 2));
    const taker = worker(ns);
    expect((await taker.getNextJob('t1', { block: false }))!.id).toBe('bull');
    expect((await taker.getNextJob('t2', { block: false }))!.id).toBe('fitq');
  });

  it('priority 2,097,151 is the maximum (its score stays an exact double); 2,097,152 and floats are refused', async () => {
    const ns = await namespace();
    await ns.queue.add('run', {}, { jobId: 'max', priority: 2_097_151 });
    const score = 2_097_151 * TWO_32 + 1;
    expect(score).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
    expect(await redis.zscore(ns.key('prioritized'), 'max')).toBe(String(score));
    await expect(ns.queue.add('run', {}, { jobId: 'over', priority: 2_097_152 })).rejects.toThrow('Priority should be between 0 and 2097151');
    await expect(ns.queue.add('run', {}, { jobId: 'float', priority: 1.5 })).rejects.toThrow('Priority should not be float');
    expect(await redis.exists(ns.key('over'), ns.key('float'))).toBe(0);
  });

  it('priority 0 (or none) goes to the wait list, not prioritized, and does not touch pc', async () => {
    const ns = await namespace();
    await ns.queue.add('run', {}, { jobId: 'zero', priority: 0 });
    await ns.queue.add('run', {}, { jobId: 'none' });
    expect(await redis.lrange(ns.key('wait'), 0, -1)).toEqual(['none', 'zero']); // LPUSH: newest first
    expect(await redis.exists(ns.key('prioritized'), ns.key('pc'))).toBe(0);
    expect(await redis.hget(ns.key('zero'), 'priority')).toBe('0');
  });

  it('pc is deleted when a take finds prioritized empty, so the counter restarts at 1', async () => {
    // fitq must not assume pc only grows: any BullMQ take on an empty set resets it.
    const ns = await namespace();
    await ns.queue.add('run', {}, { jobId: 'a', priority: 1 });
    const taker = worker(ns);
    expect((await taker.getNextJob('t1', { block: false }))!.id).toBe('a');
    expect(await redis.get(ns.key('pc'))).toBe('1'); // the pop itself keeps it
    expect(await taker.getNextJob('t2', { block: false })).toBeUndefined();
    expect(await redis.exists(ns.key('pc'))).toBe(0);
    await ns.queue.add('run', {}, { jobId: 'b', priority: 1 });
    expect(await redis.zscore(ns.key('prioritized'), 'b')).toBe(String(TWO_32 + 1));
  });
});

describe('4. state lookup and counts', () => {
  it('getState / getJobState come only from membership of the hand-written keys', async () => {
    const ns = await namespace();
    for (const id of ['p', 'a', 'c', 'f', 'w', 'legacy', 'd', 'none']) await writeJob(ns, id);
    await redis.zadd(ns.key('prioritized'), TWO_32 + 1, 'p');
    await redis.lpush(ns.key('active'), 'a');
    await redis.zadd(ns.key('completed'), 3000, 'c');
    await redis.zadd(ns.key('failed'), 3000, 'f');
    await redis.lpush(ns.key('wait'), 'w');
    await redis.lpush(ns.key('paused'), 'legacy'); // the legacy paused list still reads as waiting
    await redis.zadd(ns.key('delayed'), 3000, 'd');
    const expected = { p: 'prioritized', a: 'active', c: 'completed', f: 'failed', w: 'waiting', legacy: 'waiting', d: 'delayed', none: 'unknown' };
    for (const [id, state] of Object.entries(expected)) {
      expect(await ns.queue.getJobState(id), id).toBe(state);
      expect(await (await Job.fromId(ns.queue, id))!.getState(), id).toBe(state);
    }
    expect(await ns.queue.getJobState('no-hash-at-all')).toBe('unknown');
  });

  it('a job in two keys reads as the first of completed, failed, delayed, prioritized, active, waiting', async () => {
    // fitq's scripts must move a job out of its old key in the same script.
    const ns = await namespace();
    await writeJob(ns, 'x');
    await redis.lpush(ns.key('wait'), 'x');
    await redis.lpush(ns.key('active'), 'x');
    expect(await ns.queue.getJobState('x')).toBe('active');
    await redis.zadd(ns.key('prioritized'), TWO_32 + 1, 'x');
    expect(await ns.queue.getJobState('x')).toBe('prioritized');
    await redis.zadd(ns.key('delayed'), 1, 'x');
    expect(await ns.queue.getJobState('x')).toBe('delayed');
    await redis.zadd(ns.key('failed'), 1, 'x');
    expect(await ns.queue.getJobState('x')).toBe('failed');
    await redis.zadd(ns.key('completed'), 1, 'x');
    expect(await ns.queue.getJobState('x')).toBe('completed');
  });

  it('getJobCounts counts key lengths (hash or not); getJobs lists only ids whose hash exists', async () => {
    const ns = await namespace();
    await writeJob(ns, 'p1');
    await redis.zadd(ns.key('prioritized'), TWO_32 + 1, 'p1');
    await redis.zadd(ns.key('prioritized'), TWO_32 + 2, 'ghost'); // no hash
    await redis.lpush(ns.key('wait'), 'w1', 'w2');
    await redis.lpush(ns.key('active'), 'a1');
    await redis.zadd(ns.key('completed'), 1, 'c1', 2, 'c2', 3, 'c3');
    await redis.zadd(ns.key('failed'), 1, 'f1');
    await redis.lpush(ns.key('paused'), 'old');
    await redis.zadd(ns.key('delayed'), 1, 'd1');
    // 'paused' is no longer a typed JobType (pause() leaves jobs in wait), but the legacy list is still counted.
    const paused = 'paused' as JobType;
    expect(await ns.queue.getJobCounts('wait', 'prioritized', 'active', 'completed', 'failed', paused, 'delayed')).toEqual({
      wait: 2, prioritized: 2, active: 1, completed: 3, failed: 1, paused: 1, delayed: 1,
    });
    expect((await ns.queue.getJobs(['prioritized'])).map((job) => job.id)).toEqual(['p1']);
  });
});

describe('5. completion and failure through Job.moveToCompleted / moveToFailed', () => {
  it('a take sets processedOn, pb, ats, the lock with the token, and XADDs active (prev waiting)', async () => {
    // fitq's claim writes the same, so BullMQ's later moves and readers agree with it.
    const ns = await namespace();
    await ns.queue.add('run', {}, { jobId: 'a', priority: 1 });
    const before = (await streamEvents(ns)).length;
    const job = (await worker(ns).getNextJob('tok-a', { block: false }))!;
    const hash = await redis.hgetall(ns.key('a'));
    expect(hash).toMatchObject({ processedOn: String(job.processedOn), pb: WORKER_NAME, ats: '1' });
    expect(await redis.lrange(ns.key('active'), 0, -1)).toEqual(['a']);
    expect(await redis.exists(ns.key('prioritized'))).toBe(0);
    expect(await redis.get(ns.key('a:lock'))).toBe('tok-a');
    const ttl = await redis.pttl(ns.key('a:lock'));
    expect(ttl).toBeGreaterThan(20_000); // lockDuration defaults to 30 s
    expect(ttl).toBeLessThanOrEqual(30_000);
    expect((await streamEvents(ns)).slice(before)).toEqual([{ event: 'active', jobId: 'a', prev: 'waiting' }]);
  });

  it('moveToCompleted(value, token, false): completed score = finishedOn, returnvalue JSON, atm+1, lock gone, completed event', async () => {
    const ns = await namespace();
    await ns.queue.add('run', {}, { jobId: 'a', priority: 1 });
    await ns.queue.add('run', {}, { jobId: 'b', priority: 2 });
    const job = (await worker(ns).getNextJob('tok-a', { block: false }))!;
    const before = (await streamEvents(ns)).length;
    expect(await job.moveToCompleted({ exitCode: 0 }, 'tok-a', false)).toEqual([]);

    const hash = await redis.hgetall(ns.key('a'));
    expect(Object.keys(hash).sort()).toEqual(
      ['ats', 'atm', 'data', 'delay', 'finishedOn', 'name', 'opts', 'pb', 'priority', 'processedOn', 'returnvalue', 'timestamp'].sort(),
    );
    expect(hash).toMatchObject({ returnvalue: '{"exitCode":0}', atm: '1', finishedOn: String(job.finishedOn) });
    expect(await redis.zrange(ns.key('completed'), 0, -1, 'WITHSCORES')).toEqual(['a', hash.finishedOn]);
    expect(await redis.exists(ns.key('a:lock'), ns.key('active'))).toBe(0);
    // No 'drained': b is still prioritized. The trim (XTRIM) precedes the XADD.
    expect((await streamEvents(ns)).slice(before)).toEqual([{ event: 'completed', jobId: 'a', returnvalue: '{"exitCode":0}', prev: 'active' }]);

    // fetchNext = false left the next job where it was.
    expect(await ns.queue.getJobState('b')).toBe('prioritized');
    expect(await redis.exists(ns.key('b:lock'))).toBe(0);
    expect(await redis.hexists(ns.key('b'), 'processedOn')).toBe(0);
  });

  it('moveToCompleted(value, token, true) instead takes the next job at once, locked with the same token', async () => {
    const ns = await namespace();
    await ns.queue.add('run', {}, { jobId: 'a', priority: 1 });
    await ns.queue.add('run', {}, { jobId: 'b', priority: 2 });
    const job = (await worker(ns).getNextJob('tok', { block: false }))!;
    const next = await job.moveToCompleted('done', 'tok', true);
    expect(Array.isArray(next) && next[1]).toBe('b');
    expect(await ns.queue.getJobState('b')).toBe('active');
    expect(await redis.get(ns.key('b:lock'))).toBe('tok');
  });

  it('moveToFailed(error, token, false): failed score = finishedOn, failedReason, stacktrace, failed + retries-exhausted + drained events', async () => {
    const ns = await namespace();
    await ns.queue.add('run', {}, { jobId: 'a', priority: 1 });
    const job = (await worker(ns).getNextJob('tok-a', { block: false }))!;
    const before = (await streamEvents(ns)).length;
    await job.moveToFailed(new Error('x'), 'tok-a', false);

    const hash = await redis.hgetall(ns.key('a'));
    expect(hash).toMatchObject({ failedReason: 'x', atm: '1', finishedOn: String(job.finishedOn) });
    expect(hash.returnvalue).toBeUndefined();
    const stacktrace = JSON.parse(hash.stacktrace!) as string[];
    expect(stacktrace).toHaveLength(1);
    expect(stacktrace[0]).toMatch(/^Error: x\n/);
    expect(await redis.zrange(ns.key('failed'), 0, -1, 'WITHSCORES')).toEqual(['a', hash.finishedOn]);
    expect(await redis.exists(ns.key('a:lock'), ns.key('active'))).toBe(0);
    // attempts defaults to 0, so even a first failure is "retries exhausted";
    // 'drained' follows once wait, active and prioritized are all empty.
    expect((await streamEvents(ns)).slice(before)).toEqual([
      { event: 'failed', jobId: 'a', failedReason: 'x', prev: 'active' },
      { event: 'retries-exhausted', jobId: 'a', attemptsMade: '1' },
      { event: 'drained' },
    ]);
  });

  it('moving a job needs its lock key to hold the token: a wrong token or a missing lock changes nothing', async () => {
    const ns = await namespace();
    await ns.queue.add('run', {}, { jobId: 'a', priority: 1 });
    const job = (await worker(ns).getNextJob('tok-a', { block: false }))!;
    await expect(job.moveToCompleted('v', 'other', false)).rejects.toThrow('Lock mismatch for job a. Cmd moveToFinished from active');
    await redis.del(ns.key('a:lock'));
    await expect(job.moveToCompleted('v', 'tok-a', false)).rejects.toThrow('Missing lock for job a. moveToFinished');
    expect(await ns.queue.getJobState('a')).toBe('active');
    expect(await redis.hexists(ns.key('a'), 'finishedOn')).toBe(0);
  });
});

describe('6. events: QueueEvents and waitUntilFinished', () => {
  it('QueueEvents emits a hand-XADDed entry under its event field, and again as <event>:<jobId>', async () => {
    const ns = await namespace();
    const events = await queueEvents(ns);
    const completed = nextEmission(events, 'completed');
    const completedOfX = nextEmission(events, 'completed:X');
    const id = await redis.xadd(ns.key('events'), '*', 'event', 'completed', 'jobId', 'X', 'returnvalue', '"0"', 'prev', 'active');
    // returnvalue is JSON.parsed; every other field is passed as written.
    expect(await completed).toEqual([{ jobId: 'X', returnvalue: '0', prev: 'active' }, id]);
    expect(await completedOfX).toEqual([{ jobId: 'X', returnvalue: '0', prev: 'active' }, id]);

    const failed = nextEmission(events, 'failed');
    const failedId = await redis.xadd(ns.key('events'), '*', 'event', 'failed', 'jobId', 'Y', 'failedReason', 'exit code 1', 'prev', 'active');
    expect(await failed).toEqual([{ jobId: 'Y', failedReason: 'exit code 1', prev: 'active' }, failedId]);
  });

  it('a custom event name (restaged) is emitted under that name, fields verbatim', async () => {
    const ns = await namespace();
    const events = await queueEvents(ns);
    const restaged = nextEmission(events, 'restaged');
    const restagedOfR = nextEmission(events, 'restaged:r9');
    const id = await redis.xadd(ns.key('events'), '*', 'event', 'restaged', 'jobId', 'r9', 'reason', 'worker lost', 'count', '1');
    expect(await restaged).toEqual([{ jobId: 'r9', reason: 'worker lost', count: '1' }, id]);
    expect(await restagedOfR).toEqual([{ jobId: 'r9', reason: 'worker lost', count: '1' }, id]);
  });

  it('a completed event whose returnvalue is not JSON (or missing) stops QueueEvents for good', async () => {
    // So every 'completed' fitq XADDs must carry a JSON returnvalue.
    const ns = await namespace();
    const events = await queueEvents(ns);
    const error = nextEmission(events, 'error');
    await redis.xadd(ns.key('events'), '*', 'event', 'completed', 'jobId', 'bad', 'prev', 'active');
    const [thrown] = await error;
    expect(thrown).toBeInstanceOf(SyntaxError);
    let later = false;
    events.on('completed', () => (later = true));
    await redis.xadd(ns.key('events'), '*', 'event', 'completed', 'jobId', 'good', 'returnvalue', '1', 'prev', 'active');
    await sleep(300);
    expect(later).toBe(false);
  });

  it('waitUntilFinished resolves from the completed event alone (parsed returnvalue)', async () => {
    const ns = await namespace();
    const events = await queueEvents(ns);
    await writeJob(ns, 'a');
    await redis.lpush(ns.key('active'), 'a');
    const job = (await ns.queue.getJob('a'))!;
    const finished = job.waitUntilFinished(events);
    await sleep(50);
    // Only the event: no completed zset entry, so only the event can resolve it.
    await redis.xadd(ns.key('events'), '*', 'event', 'completed', 'jobId', 'a', 'returnvalue', '{"exitCode":0}', 'prev', 'active');
    await expect(finished).resolves.toEqual({ exitCode: 0 });
  });

  it('waitUntilFinished resolves / rejects for jobs finished by hand while it waits', async () => {
    const ns = await namespace();
    const events = await queueEvents(ns);
    for (const id of ['ok', 'bad']) {
      await writeJob(ns, id, { processedOn: '2000' });
      await redis.lpush(ns.key('active'), id);
    }
    const ok = (await ns.queue.getJob('ok'))!;
    const bad = (await ns.queue.getJob('bad'))!;
    // Settled together, so the rejection is handled whenever it comes.
    const settled = Promise.allSettled([ok.waitUntilFinished(events), bad.waitUntilFinished(events)]);
    await sleep(50);
    await redis.multi()
      .lrem(ns.key('active'), 1, 'ok').zadd(ns.key('completed'), 3000, 'ok')
      .hset(ns.key('ok'), 'finishedOn', '3000', 'returnvalue', '{"exitCode":0}')
      .xadd(ns.key('events'), '*', 'event', 'completed', 'jobId', 'ok', 'returnvalue', '{"exitCode":0}', 'prev', 'active')
      .lrem(ns.key('active'), 1, 'bad').zadd(ns.key('failed'), 3000, 'bad')
      .hset(ns.key('bad'), 'finishedOn', '3000', 'failedReason', 'exit code 3')
      .xadd(ns.key('events'), '*', 'event', 'failed', 'jobId', 'bad', 'failedReason', 'exit code 3', 'prev', 'active')
      .exec();
    const [okResult, badResult] = await settled;
    expect(okResult).toEqual({ status: 'fulfilled', value: { exitCode: 0 } });
    expect(badResult).toEqual({ status: 'rejected', reason: new Error('exit code 3') });
  });

  it('waitUntilFinished checks the zsets first: an already finished job settles from its hash, with no event', async () => {
    const ns = await namespace();
    const events = await queueEvents(ns);
    await writeJob(ns, 'ok', { finishedOn: '3000', returnvalue: '"from the hash"' });
    await redis.zadd(ns.key('completed'), 3000, 'ok');
    await writeJob(ns, 'bad', { finishedOn: '3000', failedReason: 'reason from the hash' });
    await redis.zadd(ns.key('failed'), 3000, 'bad');
    const ok = (await ns.queue.getJob('ok'))!;
    const bad = (await ns.queue.getJob('bad'))!;
    expect(await ok.isCompleted()).toBe(true);
    expect(await bad.isFailed()).toBe(true);
    await expect(ok.waitUntilFinished(events, 2000)).resolves.toBe('from the hash');
    await expect(bad.waitUntilFinished(events, 2000)).rejects.toThrow('reason from the hash');
  });

  it('waitUntilFinished rejects at once when the job hash is gone (e.g. trimmed by retention)', async () => {
    const ns = await namespace();
    const events = await queueEvents(ns);
    await writeJob(ns, 'gone');
    const job = (await ns.queue.getJob('gone'))!;
    await redis.del(ns.key('gone'));
    await expect(job.waitUntilFinished(events, 2000)).rejects.toThrow(`Missing key for job ${ns.key('gone')}. isFinished`);
  });
});

describe('7. retention', () => {
  it('removeOnComplete {count: 2} deletes the trimmed job hash and its :logs (no removed event), not fitq keys such as :output', async () => {
    const ns = await namespace();
    const taker = worker(ns);
    for (const id of ['a', 'b', 'c']) await ns.queue.add('run', {}, { jobId: id, priority: 1, removeOnComplete: { count: 2 } });
    // The option is stored in the hash opts: any BullMQ finisher of the job applies it.
    expect(JSON.parse((await redis.hget(ns.key('a'), 'opts'))!)).toMatchObject({ removeOnComplete: { count: 2 } });
    let commands: string[][] = [];
    for (const id of ['a', 'b', 'c']) {
      const job = (await taker.getNextJob(`tok-${id}`, { block: false }))!;
      expect(job.id).toBe(id);
      await job.log(`log of ${id}`);
      await redis.set(ns.key(`${id}:output`), 'fitq output');
      commands = await luaCommands(ns, () => job.moveToCompleted('ok', `tok-${id}`, false));
    }
    expect(await redis.zrange(ns.key('completed'), 0, -1)).toEqual(['b', 'c']);
    expect(await redis.exists(ns.key('a'), ns.key('a:logs'))).toBe(0);
    expect(await redis.exists(ns.key('a:output'), ns.key('b'), ns.key('b:logs'), ns.key('c'), ns.key('c:logs'))).toBe(5);
    // removeJobKeys: exactly these sub-keys go (never :lock, :output or any other).
    const a = ns.key('a');
    expect(commands.filter(([name]) => name === 'DEL')).toEqual([
      ['DEL', ns.key('c:lock')],
      ['DEL', a, `${a}:logs`, `${a}:dependencies`, `${a}:processed`, `${a}:failed`, `${a}:unsuccessful`],
    ]);
    expect((await streamEvents(ns)).some((event) => event.event === 'removed')).toBe(false);
  });

  it('trimming happens only inside moveToFinished: a job completed by hand is never trimmed by BullMQ', async () => {
    // fitq's finish script must trim its own completed/failed zsets.
    const ns = await namespace();
    for (const [index, id] of ['a', 'b', 'c'].entries()) {
      await writeJob(ns, id, { opts: '{"removeOnComplete":{"count":1}}', finishedOn: String(3000 + index), returnvalue: '0' });
      await redis.zadd(ns.key('completed'), 3000 + index, id);
    }
    await ns.queue.getJobCounts(); // reading does not trim
    expect(await redis.zrange(ns.key('completed'), 0, -1)).toEqual(['a', 'b', 'c']);
    expect(await redis.exists(ns.key('a'), ns.key('b'), ns.key('c'))).toBe(3);
  });

  it('job.remove deletes the same keys, leaves fitq keys, and XADDs removed with prev', async () => {
    const ns = await namespace();
    await ns.queue.add('run', {}, { jobId: 'r', priority: 1 });
    await redis.rpush(ns.key('r:logs'), 'line');
    await redis.set(ns.key('r:output'), 'fitq output');
    await (await ns.queue.getJob('r'))!.remove();
    expect(await redis.exists(ns.key('r'), ns.key('r:logs'), ns.key('prioritized'))).toBe(0);
    expect(await redis.get(ns.key('r:output'))).toBe('fitq output');
    expect((await streamEvents(ns)).at(-1)).toEqual({ event: 'removed', jobId: 'r', prev: 'prioritized' });
  });
});

describe('8. pause', () => {
  it('pause() sets meta paused = 1 (and drops the marker), resume() deletes it; isPaused reads that field', async () => {
    const ns = await namespace();
    await ns.queue.add('run', {}, { jobId: 'a', priority: 1 });
    expect(await ns.queue.isPaused()).toBe(false);
    expect(await redis.exists(ns.key('marker'))).toBe(1);
    await ns.queue.pause();
    expect(await redis.hget(ns.key('meta'), 'paused')).toBe('1');
    expect(await redis.exists(ns.key('marker'))).toBe(0);
    expect(await ns.queue.isPaused()).toBe(true);
    await ns.queue.resume();
    expect(await redis.hexists(ns.key('meta'), 'paused')).toBe(0);
    expect(await ns.queue.isPaused()).toBe(false);
    expect(await redis.zrange(ns.key('marker'), 0, -1, 'WITHSCORES')).toEqual(['0', '0']);
    expect((await streamEvents(ns)).slice(-2)).toEqual([{ event: 'paused' }, { event: 'resumed' }]);
  });

  it('any value of the paused field pauses (even "0"): isPaused is true and workers take nothing', async () => {
    const ns = await namespace();
    await ns.queue.add('run', {}, { jobId: 'a', priority: 1 });
    await redis.hset(ns.key('meta'), 'paused', '0');
    expect(await ns.queue.isPaused()).toBe(true);
    const taker = worker(ns);
    expect(await taker.getNextJob('t1', { block: false })).toBeUndefined();
    await redis.hdel(ns.key('meta'), 'paused');
    expect((await taker.getNextJob('t2', { block: false }))!.id).toBe('a');
  });
});

describe('9. lock', () => {
  it('extendLock(token, ms) returns 1 only while <id>:lock holds that token, and never recreates the lock', async () => {
    const ns = await namespace();
    await ns.queue.add('run', {}, { jobId: 'a', priority: 1 });
    const job = (await worker(ns).getNextJob('tok-a', { block: false }))!;
    expect(await job.extendLock('tok-a', 5000)).toBe(1);
    const ttl = await redis.pttl(ns.key('a:lock'));
    expect(ttl).toBeGreaterThan(2500);
    expect(ttl).toBeLessThanOrEqual(5000);
    expect(await job.extendLock('other', 60_000)).toBe(0);
    expect(await redis.pttl(ns.key('a:lock'))).toBeLessThanOrEqual(5000);
    await redis.del(ns.key('a:lock'));
    expect(await job.extendLock('tok-a', 5000)).toBe(0);
    expect(await redis.exists(ns.key('a:lock'))).toBe(0);
  });

  it('a claim made by hand (active + SET <id>:lock token) is extendable and completable with that token', async () => {
    const ns = await namespace();
    await writeJob(ns, 'h', { priority: '1', processedOn: '2000' });
    await redis.lpush(ns.key('active'), 'h');
    await redis.set(ns.key('h:lock'), 'fitq-token', 'PX', 10_000);
    const job = (await ns.queue.getJob('h'))!;
    expect(await job.extendLock('fitq-token', 20_000)).toBe(1);
    await job.moveToCompleted({ exitCode: 0 }, 'fitq-token', false);
    expect(await ns.queue.getJobState('h')).toBe('completed');
    expect(await redis.exists(ns.key('h:lock'))).toBe(0);
  });

  it('job.remove() refuses a job whose lock key exists, and removes it once the lock is gone', async () => {
    const ns = await namespace();
    await writeJob(ns, 'a');
    await redis.lpush(ns.key('active'), 'a');
    await redis.set(ns.key('a:lock'), 'any-token');
    const job = (await ns.queue.getJob('a'))!;
    await expect(job.remove()).rejects.toThrow('Job a could not be removed because it is locked by another worker');
    expect(await redis.exists(ns.key('a'))).toBe(1);
    expect(await redis.lrange(ns.key('active'), 0, -1)).toEqual(['a']);
    await redis.del(ns.key('a:lock'));
    await job.remove();
    expect(await redis.exists(ns.key('a'), ns.key('active'))).toBe(0);
    expect((await streamEvents(ns)).at(-1)).toEqual({ event: 'removed', jobId: 'a', prev: 'active' });
  });
});

describe('10. events stream length', () => {
  it('a new Queue writes meta opts.maxLenEvents = 10000 and version', async () => {
    // The version is a deliberate tripwire: on any upgrade, re-read the Lua behind this file.
    const ns = await namespace();
    expect(await redis.hgetall(ns.key('meta'))).toEqual({ 'opts.maxLenEvents': '10000', version: 'bullmq:6.7.0' });
    const sized = await namespace({ streams: { events: { maxLen: 50 } } });
    expect(await redis.hget(sized.key('meta'), 'opts.maxLenEvents')).toBe('50');
  });

  it('every new Queue overwrites a hand-set opts.maxLenEvents (unless skipMetasUpdate)', async () => {
    // So a length fitq chooses is reset by any other process opening the queue (Bull Board).
    const ns = await namespace();
    await redis.hset(ns.key('meta'), 'opts.maxLenEvents', '500');
    const other = track(new Queue(QUEUE, { connection: connection(), prefix: ns.prefix }));
    await other.getVersion();
    expect(await redis.hget(ns.key('meta'), 'opts.maxLenEvents')).toBe('10000');
    await redis.hset(ns.key('meta'), 'opts.maxLenEvents', '500');
    const quiet = track(new Queue(QUEUE, { connection: connection(), prefix: ns.prefix, skipMetasUpdate: true }));
    await quiet.waitUntilReady();
    await quiet.add('run', {}, { jobId: 'a', priority: 1 });
    expect(await redis.hget(ns.key('meta'), 'opts.maxLenEvents')).toBe('500');
  });

  it('adds XADD waiting with MAXLEN ~ <opts.maxLenEvents> (added has none); finishing XTRIMs MAXLEN ~ first', async () => {
    const ns = await namespace({ skipMetasUpdate: true });
    expect(await redis.exists(ns.key('meta'))).toBe(0);
    const events = ns.key('events');
    // With no meta, the first add writes the default.
    const add = await luaCommands(ns, () => ns.queue.add('run', {}, { jobId: 'a', priority: 1 }));
    expect(await redis.hgetall(ns.key('meta'))).toEqual({ 'opts.maxLenEvents': '10000' });
    expect(add.filter(([name]) => name === 'XADD')).toEqual([
      ['XADD', events, '*', 'event', 'added', 'jobId', 'a', 'name', 'run'],
      ['XADD', events, 'MAXLEN', '~', '10000', '*', 'event', 'waiting', 'jobId', 'a'],
    ]);

    await redis.hset(ns.key('meta'), 'opts.maxLenEvents', '7');
    const addSmall = await luaCommands(ns, () => ns.queue.add('run', {}, { jobId: 'b', priority: 1 }));
    expect(addSmall.filter(([name]) => name === 'XADD')[1]).toEqual(['XADD', events, 'MAXLEN', '~', '7', '*', 'event', 'waiting', 'jobId', 'b']);

    const job = (await worker(ns).getNextJob('tok', { block: false }))!;
    const finish = await luaCommands(ns, () => job.moveToCompleted(1, 'tok', false));
    expect(finish.filter(([name]) => name === 'XTRIM' || name === 'XADD')).toEqual([
      ['XTRIM', events, 'MAXLEN', '~', '7'],
      ['XADD', events, '*', 'event', 'completed', 'jobId', 'a', 'returnvalue', '1', 'prev', 'active'],
    ]);
  });
});
