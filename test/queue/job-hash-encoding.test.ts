/**
 * A short run's job hash stays a listpack under Redis's default
 * configuration (hash-max-listpack-value 64; hash-max-listpack-entries 128 or more):
 * no field of it is longer than 64 bytes, staged (alone or in a batch of
 * chunks) and finished. A hashtable costs about 60 bytes a field more
 * (docs/benchmarks.md, "Bytes per run"). Data longer than that (a long
 * command or working directory, an env, a signature) makes it a hashtable,
 * as Redis decides.
 */
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { encodeRunUsage } from '../../src/model/run-usage.js';
import { Scripts } from '../../src/queue/scripts.js';
import { connectClient, newQueue } from '../support/fitq.js';

const LISTPACK_VALUE = 64;

/** A job hash's encoding, and its fields longer than hash-max-listpack-value. */
async function encodingOf(client: FitqClient, runId: string): Promise<{ encoding: string; long: string[] }> {
  const key = client.keys.run(runId);
  const hash = await client.redis.hgetall(key);
  const long = Object.entries(hash).flatMap(([name, value]) => (Buffer.byteLength(value) > LISTPACK_VALUE ? [name] : [])).sort();
  return { encoding: String(await client.redis.object('ENCODING', key)), long };
}

describe('a short run\'s job hash', () => {
  it('runs on a Redis with the default listpack limits', async () => {
    const client = await connectClient(newQueue());
    expect(await client.redis.config('GET', 'hash-max-listpack-value')).toEqual(['hash-max-listpack-value', String(LISTPACK_VALUE)]);
    // (Redis's default is 128 or more, as built: a run's hash has fewer than 40 fields.)
    const [, entries] = (await client.redis.config('GET', 'hash-max-listpack-entries')) as string[];
    expect(Number(entries)).toBeGreaterThanOrEqual(128);
  });

  it('is a listpack when staged, alone or in a batch staged in chunks', async () => {
    const client = await connectClient(newQueue());
    const [alone] = (await client.stage({ command: ['true'], resources: 'cpu=1', cwd: '/tmp' })).runs;
    expect(await encodingOf(client, alone!.id)).toEqual({ encoding: 'listpack', long: [] });
    const batch = (await client.stage({ command: ['true'], resources: 'cpu=1', cwd: '/tmp', repeat: 600 })).runs;
    for (const run of [batch[0]!, batch[599]!]) expect(await encodingOf(client, run.id)).toEqual({ encoding: 'listpack', long: [] });
    // Its data is still the run's, for BullMQ's job.data.
    expect(JSON.parse(String(await client.redis.hget(client.keys.run(alone!.id), 'data')))).toEqual({
      command: ['true'], cwd: '/tmp', resources: 'cpu=1',
    });
  });

  it('is still a listpack once the run has run and ended', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 10_000);
    const token = 'enc-token';
    expect(await scripts.registerWorker({ name: 'enc', token, leaseMs: 600_000, concurrency: 0, host: 'h', pid: 1, resources: 'cpu=1' })).toBe(true);
    const [run] = (await client.stage({ command: ['true'], resources: 'cpu=1', cwd: '/tmp' })).runs;
    const claim = await scripts.claimRun('enc', token, 0);
    expect(claim).toMatchObject({ code: 'claimed', runId: run!.id });
    if (claim.code !== 'claimed') return;
    // What a sampled run of a few seconds used, as its worker stores it.
    const usage = encodeRunUsage({ source: 'sampled', wallMs: 2873, cpuUserMs: 2610, cpuSystemMs: 210, peakMemoryBytes: 165_601_280, samples: 3 });
    const ended = await scripts.finishRun({ runId: run!.id, worker: 'enc', token, epoch: claim.epoch, status: 'completed', exitCode: 0, reason: 'exit code 0', usage });
    expect(ended).toEqual({ outcome: 'recorded', status: 'completed' });
    expect(await encodingOf(client, run!.id)).toEqual({ encoding: 'listpack', long: [] });
    expect(await client.getRun(run!.id)).toMatchObject({ status: 'completed', exitCode: 0, worker: 'enc', command: ['true'], cwd: '/tmp', usage: { peakMemoryBytes: 165_601_280 } });
  });

  it('is a hashtable when its data is longer than 64 bytes, and reads the same', async () => {
    const client = await connectClient(newQueue());
    const cwd = '/tmp';
    const [run] = (await client.stage({ command: ['true'], resources: 'cpu=1', cwd, env: { A_LONG_ENOUGH_NAME: 'and a value long enough too' } })).runs;
    expect(await encodingOf(client, run!.id)).toEqual({ encoding: 'hashtable', long: ['data', 'runData'] });
    const { command, env, cwd: shown, resources, status } = run!;
    expect(await client.getRun(run!.id)).toMatchObject({ command, env, cwd: shown, resources, status });
  });
});
