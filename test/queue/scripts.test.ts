/**
 * Fencing in the scripts: output is stored only while its run is held by the
 * claim that produced it, and a lapsed lease stays lapsed.
 */
import { describe, expect, it } from 'vitest';
import { Scripts } from '../../src/queue/scripts.js';
import { connectClient, newQueue } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

describe('appendLog', () => {
  it('writes lines of a running run for its claim only', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const { runs } = await client.stage({ command: ['true'], resources: 'x=1' });
    const id = runs[0]!.id;
    const line = [{ stream: 'stdout' as const, line: 'hello' }];

    expect(await scripts.appendLog(id, 'w', '1', line)).toBe(0); // still staged
    const registration = { name: 'w', token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources: 'x=1', executorQueue: '' };
    expect(await scripts.registerWorker(registration)).toBe(true);
    const claim = await scripts.claimRun('w', 'tok', Date.now(), 0);
    expect(claim).toMatchObject({ code: 'claimed', runId: id, epoch: '1' });

    expect(await scripts.appendLog(id, 'w', '1', [...line, { stream: 'stderr', line: 'oops' }])).toBe(2);
    expect(await scripts.appendLog(id, 'other', '1', line)).toBe(0);
    expect(await scripts.appendLog(id, 'w', '2', line)).toBe(0);
    await scripts.finishRun({ runId: id, worker: 'w', epoch: '1', status: 'completed', exitCode: 0, reason: 'exit code 0' }, Date.now());
    expect(await scripts.appendLog(id, 'w', '1', line)).toBe(0); // ended
    expect(await client.readLog(id)).toEqual([
      expect.objectContaining({ kind: 'line', stream: 'stdout', line: 'hello' }),
      expect.objectContaining({ kind: 'line', stream: 'stderr', line: 'oops' }),
      expect.objectContaining({ kind: 'end', status: 'completed' }),
    ]);
    await scripts.deregisterWorker('w', 'tok', Date.now());
  });
});

describe('heartbeat', () => {
  it('a lapsed lease is not revived by a heartbeat: the worker is fenced', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const registration = { name: 'slow', token: 'tok', leaseMs: 300, concurrency: 0, host: 'h', pid: 1, resources: '', executorQueue: '' };
    expect(await scripts.registerWorker(registration)).toBe(true);
    expect(await scripts.heartbeat('slow', 'tok', 300)).toEqual({ cancels: [] });
    await waitFor('the lease to lapse (by the Redis clock)', async () => {
      const [seconds, micros] = await client.redis.time();
      const deadline = Number(await client.redis.zscore(client.keys.workers, 'slow'));
      return deadline < Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    }, 5000);
    expect(await scripts.heartbeat('slow', 'tok', 300)).toBeUndefined();
    expect(await scripts.claimRun('slow', 'tok', Date.now(), 0)).toEqual({ code: 'fenced' });
    // Registering again under the same name works: the old registration is reaped.
    expect(await scripts.registerWorker({ ...registration, token: 'tok2' })).toBe(true);
    await scripts.deregisterWorker('slow', 'tok2', Date.now());
  });
});
