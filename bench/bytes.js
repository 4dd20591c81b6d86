// Redis memory per run: 100,000 staged runs of `true` (-r cpu=1, in /tmp), read as
// INFO memory's used_memory before and after, against the same number of
// plain BullMQ jobs added with the same job data (the floor fitq builds
// on), in the same run; then runs staged in a namespace of their own run to
// their end by a real `fitq worker --run-once`, per finished run. Each is
// broken down per key kind by MEMORY USAGE (SAMPLES 0: every element):
// one run's own keys, and the shared keys (indexes, the events stream)
// divided by their runs. Then runs whose job data is longer than Redis's
// hash-max-listpack-value (a longer working directory), whose job hash is a
// hashtable, against plain BullMQ jobs with that data.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { FitqClient } from '../dist/index.js';

const STAGED = Number(process.env.BENCH_BYTES_RUNS ?? 100_000);
const FINISHED = Number(process.env.BENCH_BYTES_FINISHED ?? 2_000);
/** Runs staged with data longer than Redis's hash-max-listpack-value (64 bytes). */
const LONG = Number(process.env.BENCH_BYTES_LONG ?? 20_000);
/**
 * The runs' working directory, given so the figures do not depend on where
 * the bench runs from (the default is the current directory, in the data).
 */
const CWD = '/tmp';
const CONCURRENCY = 8;
const WARM_UP = 20;
const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url));

async function usedMemory(redis) {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)[1]);
}

const usage = async (redis, key) => Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);

/** Every key of a namespace (by prefix), with its bytes. */
async function keysOf(redis, prefix) {
  const keys = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/**
 * Bytes per run of each key kind: a run's own keys (runs:<id>, its output,
 * attempts...) summed over its runs, the shared ones whole; each / runs.
 */
async function breakdown(redis, prefix, runs) {
  const kinds = new Map();
  for (const key of await keysOf(redis, prefix)) {
    const rest = key.slice(prefix.length);
    // fitq's run keys (runs:<id>...), BullMQ's jobs (<id>, numbered).
    const own = /^(runs:)?([0-9a-f]{12}|\d+)(:.+)?$/.exec(rest);
    const kind = own ? `${own[1] ?? ''}<id>${own[3] ?? ''}` : rest.replace(/^staged:.*/, 'staged:<shape>');
    kinds.set(kind, (kinds.get(kind) ?? 0) + (await usage(redis, key)));
  }
  return [...kinds].map(([kind, bytes]) => ({ kind, bytes: bytes / runs })).sort((a, b) => b.bytes - a.bytes);
}

/** One run's job hash: its encoding and each field's length (name + value). */
async function jobHash(redis, key) {
  const hash = await redis.hgetall(key);
  const fields = Object.entries(hash).map(([name, value]) => ({ name, bytes: Buffer.byteLength(name) + Buffer.byteLength(value) }));
  return { encoding: await redis.object('ENCODING', key), bytes: await usage(redis, key), fields, data: hash.data };
}

/** The floor: `runs` plain BullMQ jobs (Queue.addBulk) with the job data fitq writes. */
async function bullmqJobs(url, name, runs, data) {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection: redis });
  await queue.waitUntilReady();
  const before = await usedMemory(redis);
  for (let i = 0; i < runs; i += 1000) {
    await queue.addBulk(Array.from({ length: Math.min(1000, runs - i) }, () => ({ name: 'run', data })));
  }
  const perJob = (await usedMemory(redis) - before) / runs;
  const parts = await breakdown(redis, `bull:${name}:`, runs);
  await queue.obliterate({ force: true });
  await queue.close();
  redis.disconnect();
  return { perJob, parts };
}

/** `runs` runs staged in one namespace (in `cwd`): bytes per staged run, then the namespace emptied. */
async function stagedRuns(url, queue, runs = STAGED, cwd = CWD) {
  const client = await FitqClient.connect({ redisUrl: url, queue });
  try {
    const before = await usedMemory(client.redis);
    await client.stage({ command: ['true'], resources: 'cpu=1', cwd, repeat: runs });
    const perRun = (await usedMemory(client.redis) - before) / runs;
    const prefix = client.keys.base;
    const parts = await breakdown(client.redis, prefix, runs);
    const [id] = await client.redis.zrange(client.keys.ids, 0, 0);
    const hash = await jobHash(client.redis, `${prefix}runs:${id}`);
    await client.removeRuns(await client.redis.zrange(client.keys.ids, 0, -1));
    return { perRun, parts, hash, data: JSON.parse(hash.data) };
  } finally {
    await client.close();
  }
}

/** `fitq worker --run-once` until it exits. */
const runWorker = (url, queue) =>
  execa('node', [BIN, 'worker', '-r', `cpu=${CONCURRENCY}`, '--concurrency', String(CONCURRENCY), '--run-once', '--log-format', 'json'], {
    env: { FITQ_REDIS_URL: url, FITQ_QUEUE: queue },
    stdout: 'ignore',
    stderr: 'inherit',
  });

/**
 * FINISHED runs staged in a namespace of their own, run to their end by a
 * CLI worker: bytes per finished run, every one kept (retention off: the
 * default keeps the last 10,000, so at 100,000 runs most would be gone and
 * the figure would say nothing of one kept). A few runs run first, so what
 * a namespace holds once whatever its runs (the worker's scripts loaded,
 * its statistics) is not counted per run.
 */
async function finishedRuns(url, queue) {
  const client = await FitqClient.connect({ redisUrl: url, queue });
  try {
    await client.setRetention({ keepCompleted: null, keepAgeMs: null });
    await client.stage({ command: ['true'], resources: 'cpu=1', cwd: CWD, repeat: WARM_UP });
    await runWorker(url, queue);
    const before = await usedMemory(client.redis);
    await client.stage({ command: ['true'], resources: 'cpu=1', cwd: CWD, repeat: FINISHED });
    await runWorker(url, queue);
    const perRun = (await usedMemory(client.redis) - before) / FINISHED;
    const prefix = client.keys.base;
    const parts = await breakdown(client.redis, prefix, FINISHED + WARM_UP);
    const [id] = await client.redis.zrange(client.keys.ids, 0, 0);
    const hash = await jobHash(client.redis, `${prefix}runs:${id}`);
    const completed = await client.redis.zcard(`${prefix}runs:completed`);
    await client.removeRuns(await client.redis.zrange(client.keys.ids, 0, -1));
    return { perRun, parts, hash, completed };
  } finally {
    await client.close();
  }
}

/**
 * LONG runs whose job data is longer than hash-max-listpack-value: staged
 * in a working directory of a typical length, which the data holds.
 */
async function longDataRuns(url, queue) {
  const cwd = mkdtempSync(join(tmpdir(), 'fitq-bench-a-project-of-someone-'));
  try {
    return await stagedRuns(url, queue, LONG, cwd);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

/** The case and its baseline, on the Redis at `url`. */
export async function bytesPerRun(url, newQueue) {
  const staged = await stagedRuns(url, newQueue());
  const bullmq = await bullmqJobs(url, newQueue(), STAGED, staged.data);
  const finished = await finishedRuns(url, newQueue());
  const long = await longDataRuns(url, newQueue());
  const longBullmq = await bullmqJobs(url, newQueue(), LONG, long.data);
  return { runs: STAGED, finishedRuns: FINISHED, longRuns: LONG, staged, bullmq, finished, long, longBullmq };
}
