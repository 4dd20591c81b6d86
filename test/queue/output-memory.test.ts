/**
 * What a finished run with little output costs in Redis: 1,000 runs with
 * two lines each, through the scripts a worker uses (claim, output, finish),
 * and 1,000 runs canceled while staged (no output, only the end marker), all
 * kept. Measured both as MEMORY USAGE of each run's keys and as used_memory
 * over the 1,000 runs. On a server of its own, so other test files do not
 * move its memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { Scripts } from '../../src/queue/scripts.js';
import { connectClient, newQueue } from '../support/fitq.js';
import { startRedisServer, usedMemory, type RedisServer } from '../support/redis-server.js';

const RUNS = 1000;
/**
 * Bytes a finished short run's output may take, generously (about 300 B
 * packed; a stream took about 4.7 KB), and all of its keys (its job hash,
 * about 1.6 KB in Redis's default hash encoding, is most of it).
 */
const OUTPUT_BOUND = 512;
const RUN_BOUND = 2500;

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server.dispose();
});

/** MEMORY USAGE of a run's keys, averaged: its job hash, and its output (the keys under the hash). */
async function runBytes(client: FitqClient, runIds: readonly string[]): Promise<{ hash: number; output: number; outputKeys: string[] }> {
  let hash = 0;
  let output = 0;
  const outputKeys = new Set<string>();
  for (const id of runIds) {
    const jobKey = client.keys.run(id);
    const [, keys] = await client.redis.scan('0', 'MATCH', `${jobKey}*`, 'COUNT', 10_000);
    for (const key of keys) {
      const bytes = (await client.redis.memory('USAGE', key, 'SAMPLES', 0)) ?? 0;
      if (key === jobKey) hash += bytes;
      else {
        output += bytes;
        outputKeys.add(key.slice(jobKey.length));
      }
    }
  }
  return { hash: Math.round(hash / runIds.length), output: Math.round(output / runIds.length), outputKeys: [...outputKeys] };
}

describe('memory of a finished run with little output', () => {
  it(`${RUNS} runs with two lines each: each one's output takes < ${OUTPUT_BOUND} B, all its keys < ${RUN_BOUND} B`, async () => {
    const client = await connectClient(newQueue(), server.url);
    const { redis } = client;
    const scripts = new Scripts(redis, client.keys, 10_000);
    const token = 'mem-token';
    expect(await scripts.registerWorker({ name: 'mem', token, leaseMs: 600_000, concurrency: 0, host: 'h', pid: 1, resources: '' })).toBe(true);
    const staged = (await client.stage({ command: ['sh', '-c', 'echo hello; echo oops >&2'], repeat: RUNS })).runs.map((run) => run.id);
    const before = await usedMemory(redis);
    for (;;) {
      const claim = await scripts.claimRun('mem', token, 0);
      if (claim.code !== 'claimed') break;
      await scripts.appendLog(claim.runId, 'mem', token, claim.epoch, [
        { stream: 'stdout', line: 'hello' },
        { stream: 'stderr', line: 'oops' },
      ]);
      const ended = await scripts.finishRun(
        { runId: claim.runId, worker: 'mem', token, epoch: claim.epoch, status: 'completed', exitCode: 0, reason: 'exit code 0' },
      );
      expect(ended).toEqual({ outcome: 'recorded', status: 'completed' });
    }
    const perRun = Math.round(((await usedMemory(redis)) - before) / RUNS);
    expect(await redis.zcard(client.keys.queue.key('completed'))).toBe(RUNS);
    const bytes = await runBytes(client, staged);
    console.log(
      `output memory: a completed run with 2 lines (MEMORY USAGE, average of ${RUNS}): job hash ${bytes.hash} B, ` +
        `output ${bytes.output} B (${bytes.outputKeys.join(', ')}); used_memory +${perRun} B per run from staged to finished`,
    );
    // Its output still reads back, with its end.
    expect((await client.readLog(staged[0]!)).map((entry) => (entry.kind === 'line' ? entry.line : entry.kind))).toEqual(['hello', 'oops', 'end']);
    expect(bytes.output).toBeLessThan(OUTPUT_BOUND);
    expect(bytes.hash + bytes.output).toBeLessThan(RUN_BOUND);
    expect(perRun).toBeLessThan(RUN_BOUND);
  }, 120_000);

  it(`${RUNS} runs canceled while staged (an end marker only): each one's output takes < ${OUTPUT_BOUND} B`, async () => {
    const client = await connectClient(newQueue(), server.url);
    const { redis } = client;
    const staged = (await client.stage({ command: ['true'], repeat: RUNS })).runs.map((run) => run.id);
    const before = await usedMemory(redis);
    await client.cancelRuns(staged);
    const perRun = Math.round(((await usedMemory(redis)) - before) / RUNS);
    const bytes = await runBytes(client, staged);
    console.log(
      `output memory: a run canceled while staged (average of ${RUNS}): job hash ${bytes.hash} B, output ${bytes.output} B; ` +
        `used_memory +${perRun} B per run for its end`,
    );
    expect((await client.readLog(staged[0]!)).map((entry) => entry.kind)).toEqual(['end']);
    expect(bytes.output).toBeLessThan(OUTPUT_BOUND);
    expect(bytes.hash + bytes.output).toBeLessThan(RUN_BOUND);
  }, 120_000);
});
