/**
 * Redis memory stays bounded under a stream of runs: 5,000 runs with
 * retention 500 leave the keys of about 500 runs, and used memory near what
 * those hold, far below 5,000 kept ended runs. On a server of its own, so
 * other test files do not move its memory. The runs go through the scripts a
 * worker uses (claim, one line of output, finish), in 16 lanes, without
 * spawning 5,000 processes: what is measured is what Redis keeps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scripts } from '../../src/queue/scripts.js';
import { connectClient, newQueue } from '../support/fitq.js';
import { startRedisServer, usedMemory, type RedisServer } from '../support/redis-server.js';
import type { RedisConnection } from '../../src/redis/connection.js';

const RUNS = 5000;
const KEEP = 500;

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server.dispose();
});

/**
 * used_memory less the Lua scripts Redis caches (used_memory_scripts_eval):
 * the scripts a run's path loads take about as much as 500 short runs'
 * keys, and do not grow with the runs.
 */
async function memoryBesideScripts(redis: RedisConnection): Promise<number> {
  const scripts = Number(/^used_memory_scripts_eval:(\d+)/m.exec(await redis.info('memory'))?.[1] ?? 0);
  return (await usedMemory(redis)) - scripts;
}

/** The keys of a namespace, counted with SCAN. */
async function namespaceKeys(redis: RedisConnection, base: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, page] = await redis.scan(cursor, 'MATCH', `${base}*`, 'COUNT', 1000);
    keys.push(...page);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

describe('history retention bounds memory', () => {
  it(`${RUNS} runs through a worker's scripts with keep-completed ${KEEP}: the keys of ${KEEP} runs are left, and memory near them`, async () => {
    const started = performance.now();
    const queue = newQueue();
    const client = await connectClient(queue, server.url);
    const { redis } = client;
    await client.setRetention({ keepCompleted: KEEP });
    const empty = await memoryBesideScripts(redis);

    const staged = await client.stage({ command: ['true'], repeat: RUNS });
    expect(staged.runs).toHaveLength(RUNS);
    const scripts = new Scripts(redis, client.keys, 100);
    const token = 'mem-token';
    expect(await scripts.registerWorker({ name: 'mem', token, leaseMs: 600_000, concurrency: 0, host: 'h', pid: 1, resources: '' })).toBe(true);
    let ran = 0;
    const lane = async (): Promise<void> => {
      for (;;) {
        const claim = await scripts.claimRun('mem', token, 0);
        if (claim.code !== 'claimed') return;
        await scripts.appendLog(claim.runId, 'mem', token, claim.epoch, [{ stream: 'stdout', line: `run ${claim.runId}` }]);
        const ended = await scripts.finishRun({
          runId: claim.runId, worker: 'mem', token, epoch: claim.epoch, status: 'completed', exitCode: 0, reason: 'exit code 0',
        });
        expect(ended).toEqual({ outcome: 'recorded', status: 'completed' });
        ran += 1;
      }
    };
    await Promise.all(Array.from({ length: 16 }, lane));
    expect(ran).toBe(RUNS);
    expect(await scripts.deregisterWorker('mem', token)).toBe(true);
    const ranMs = performance.now() - started;

    expect(await redis.zcard(client.keys.queue.key('completed'))).toBe(KEEP);
    expect(await redis.zcard(client.keys.ids)).toBe(KEEP);
    const keys = await namespaceKeys(redis, client.keys.base);
    // Each kept run: its hash and its output (a line and the end marker, packed); nothing of the other 4,500.
    const runKeys = keys.filter((key) => /:runs:[0-9a-f]{12}(:output:packed)?$/.test(key));
    expect(runKeys).toHaveLength(2 * KEEP);
    // The rest are the namespace's own keys, whatever number of runs went through.
    const { keys: k } = client;
    const namespaceWide = new Set([
      k.ids, k.seq, k.settings, k.stats, k.fairShare, k.fairUsage, k.order(0),
      k.queue.key('events'), k.queue.key('completed'), k.queue.key('metrics:completed'),
      // BullMQ's per-minute counts: written only once a minute boundary passed during the runs.
      k.queue.key('metrics:completed:data'),
    ]);
    expect(keys.filter((key) => !runKeys.includes(key) && !namespaceWide.has(key))).toEqual([]);
    const retained = (await memoryBesideScripts(redis)) - empty;
    let keyBytes = 0;
    for (const key of keys) keyBytes += (await redis.memory('USAGE', key)) ?? 0;

    // The same number of ended runs, all kept (default retention): runs
    // canceled while staged, each with its hash and packed output.
    const compared = performance.now();
    const other = await connectClient(newQueue(), server.url);
    const before = await memoryBesideScripts(redis);
    const all = (await other.stage({ command: ['true'], repeat: RUNS })).runs.map((run) => run.id);
    await other.cancelRuns(all);
    expect(await redis.zcard(other.keys.queue.key('failed'))).toBe(RUNS);
    const kept = (await memoryBesideScripts(redis)) - before;

    console.log(
      `retention memory: ${RUNS} runs through in ${Math.round(ranMs)} ms (comparison ${Math.round(performance.now() - compared)} ms); ` +
        `${keys.length} keys left, ${runKeys.length} of them runs' keys; used_memory +${retained} B with ${KEEP} kept ` +
        `(MEMORY USAGE of the namespace's keys ${keyBytes} B) vs +${kept} B with ${RUNS} kept`,
    );
    // Near what the retained keys hold (the rest: allocator overhead), far
    // below 5,000 kept: each about 1 KB, beside the events stream, which
    // both hold at its cap.
    expect(retained).toBeLessThan(2 * keyBytes);
    expect(retained).toBeLessThan(kept / 2);
  }, 600_000);
});
