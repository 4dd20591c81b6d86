/**
 * Fencing in the scripts: output and ends are stored only while the run is
 * held by the claim that produced them and its worker's registration holds
 * a live lease, and a lapsed lease stays lapsed. A run its stopped worker
 * terminated is re-staged or lost, never failed.
 */
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/queue/client.js';
import { Scripts, type WorkerRegistration } from '../../src/queue/scripts.js';
import { connectClient, newQueue } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

const registrationOf = (name: string, token: string, leaseMs: number, resources: string): WorkerRegistration => ({
  name, token, leaseMs, concurrency: 0, host: 'h', pid: 1, resources, executorQueue: '',
});

/** Waits until the worker's lease deadline is behind the Redis server's clock. */
async function waitForLapse(client: FitqClient, name: string): Promise<void> {
  await waitFor('the lease to lapse (by the Redis clock)', async () => {
    const [seconds, micros] = await client.redis.time();
    const deadline = Number(await client.redis.zscore(client.keys.workers, name));
    return deadline < Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }, 5000);
}

describe('appendLog', () => {
  it('writes lines of a running run for its claim only', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const { runs } = await client.stage({ command: ['true'], resources: 'x=1' });
    const id = runs[0]!.id;
    const line = [{ stream: 'stdout' as const, line: 'hello' }];

    expect(await scripts.appendLog(id, 'w', 'tok', '1', line)).toBe(0); // still staged
    expect(await scripts.registerWorker(registrationOf('w', 'tok', 60_000, 'x=1'))).toBe(true);
    const claim = await scripts.claimRun('w', 'tok', Date.now(), 0);
    expect(claim).toMatchObject({ code: 'claimed', runId: id, epoch: '1' });

    expect(await scripts.appendLog(id, 'w', 'tok', '1', [...line, { stream: 'stderr', line: 'oops' }])).toBe(2);
    expect(await scripts.appendLog(id, 'other', 'tok', '1', line)).toBe(0);
    expect(await scripts.appendLog(id, 'w', 'tok', '2', line)).toBe(0);
    expect(await scripts.appendLog(id, 'w', 'stale', '1', line)).toBe(0); // an older registration
    await scripts.finishRun({ runId: id, worker: 'w', token: 'tok', epoch: '1', status: 'completed', exitCode: 0, reason: 'exit code 0' }, Date.now());
    expect(await scripts.appendLog(id, 'w', 'tok', '1', line)).toBe(0); // ended
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
    const registration = registrationOf('slow', 'tok', 300, '');
    expect(await scripts.registerWorker(registration)).toBe(true);
    expect(await scripts.heartbeat('slow', 'tok', 300)).toEqual({ cancels: [] });
    await waitForLapse(client, 'slow');
    expect(await scripts.heartbeat('slow', 'tok', 300)).toBeUndefined();
    expect(await scripts.claimRun('slow', 'tok', Date.now(), 0)).toEqual({ code: 'fenced' });
    // Registering again under the same name works: the old registration is reaped.
    expect(await scripts.registerWorker({ ...registration, token: 'tok2' })).toBe(true);
    await scripts.deregisterWorker('slow', 'tok2', Date.now());
  });
});

describe('finishRun and appendLog of a worker cut off past its lease', () => {
  it('are refused, leave the run and the reservation as they were, and the run ends lost (or re-staged) when the worker is reaped', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const { runs } = await client.stage({ command: ['true'], resources: 'x=1' });
    const retried = (await client.stage({ command: ['true'], resources: 'x=1', retries: 1 })).runs[0]!.id;
    const id = runs[0]!.id;
    expect(await scripts.registerWorker(registrationOf('cut', 'tok', 1000, 'x=2'))).toBe(true);
    expect(await scripts.claimRun('cut', 'tok', Date.now(), 0)).toMatchObject({ code: 'claimed', runId: id });
    expect(await scripts.claimRun('cut', 'tok', Date.now(), 0)).toMatchObject({ code: 'claimed', runId: retried });
    const finish = { runId: id, worker: 'cut', token: 'tok', epoch: '1', status: 'failed' as const, signal: 'SIGTERM', reason: 'killed by signal SIGTERM' };
    const line = [{ stream: 'stdout' as const, line: 'late' }];

    expect(await scripts.finishRun({ ...finish, token: 'other' }, Date.now())).toEqual({ outcome: 'fenced' });
    await waitForLapse(client, 'cut');
    expect(await scripts.appendLog(id, 'cut', 'tok', '1', line)).toBe(0);
    expect(await scripts.finishRun(finish, Date.now())).toEqual({ outcome: 'fenced' });
    expect(await scripts.finishRun({ ...finish, runId: retried, status: 'stopped', reason: 'x' }, Date.now())).toEqual({ outcome: 'fenced' });
    expect(await client.getRun(id)).toMatchObject({ status: 'running', worker: 'cut' });
    expect(await client.redis.hget(client.keys.worker('cut').free, 'x')).toBe('0');
    expect(await client.readLog(id)).toEqual([]);

    // Registering again reaps the lapsed registration, as a reaper would.
    expect(await scripts.registerWorker(registrationOf('cut', 'tok2', 60_000, 'x=2'))).toBe(true);
    const lost = await client.getRun(id);
    expect(lost).toMatchObject({ status: 'lost', reason: 'worker cut stopped renewing its lease' });
    expect(lost.signal).toBeUndefined();
    expect(await client.getRun(retried)).toMatchObject({ status: 'staged', restaged: 1, restagedReason: 'worker cut stopped renewing its lease (re-staged 1 of 1)' });
    // The stale registration's late end still changes nothing.
    expect(await scripts.finishRun(finish, Date.now())).toEqual({ outcome: 'fenced' });
    expect(await scripts.finishRun({ ...finish, token: 'tok2' }, Date.now())).toEqual({ outcome: 'movedOn', status: 'lost' });
    expect(await client.getRun(id)).toMatchObject({ status: 'lost' });
    await scripts.deregisterWorker('cut', 'tok2', Date.now());
  });

  it('a worker deregistering after its lease ran out ends its runs with the lease reason', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const id = (await client.stage({ command: ['true'], resources: 'x=1' })).runs[0]!.id;
    expect(await scripts.registerWorker(registrationOf('late', 'tok', 1000, 'x=1'))).toBe(true);
    expect(await scripts.claimRun('late', 'tok', Date.now(), 0)).toMatchObject({ code: 'claimed', runId: id });
    await waitForLapse(client, 'late');
    expect(await scripts.deregisterWorker('late', 'tok', Date.now())).toBe(true);
    expect(await client.getRun(id)).toMatchObject({ status: 'lost', reason: 'worker late stopped renewing its lease' });
  });
});

describe('finishRun of a run its worker stopped', () => {
  it('releases the worker share and the pool share, then re-stages the run at its place if it has retries left, else ends it lost', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    await client.setPool('lic=2');
    const retried = (await client.stage({ command: ['true'], resources: 'x=1 lic=1', retries: 2 })).runs[0]!.id;
    const plain = (await client.stage({ command: ['true'], resources: 'x=1 lic=1' })).runs[0]!.id;
    const later = (await client.stage({ command: ['true'], resources: 'x=1 lic=1' })).runs[0]!.id;
    expect(await scripts.registerWorker(registrationOf('w', 'tok', 60_000, 'x=2'))).toBe(true);
    for (const id of [retried, plain]) {
      expect(await scripts.claimRun('w', 'tok', Date.now(), 0)).toMatchObject({ code: 'claimed', runId: id });
    }
    const stopped = { worker: 'w', token: 'tok', epoch: '1', status: 'stopped' as const, signal: 'SIGTERM', reason: 'its worker w was stopped (second interrupt)' };

    expect(await scripts.finishRun({ ...stopped, runId: retried }, Date.now())).toEqual({ outcome: 'recorded', status: 'staged' });
    expect(await scripts.finishRun({ ...stopped, runId: plain }, Date.now())).toEqual({ outcome: 'recorded', status: 'lost' });

    const again = await client.getRun(retried);
    expect(again).toMatchObject({ status: 'staged', retries: 2, restaged: 1, restagedReason: 'its worker w was stopped (second interrupt) (re-staged 1 of 2)' });
    expect(again.worker).toBeUndefined();
    expect(again.signal).toBeUndefined();
    expect(await client.redis.zrange(client.keys.staged('lic=1,x=1'), 0, -1)).toEqual([retried, later]);
    const lost = await client.getRun(plain);
    expect(lost).toMatchObject({ status: 'lost', reason: 'its worker w was stopped (second interrupt)', worker: 'w' });
    expect(lost.signal).toBeUndefined();
    expect((await client.readLog(plain)).at(-1)).toMatchObject({ kind: 'end', status: 'lost' });
    expect(await client.redis.hgetall(client.keys.worker('w').free)).toEqual({ x: '2' });
    expect(await client.redis.hget(client.keys.worker('w').info, 'running')).toBe('0');
    expect(await client.redis.smembers(client.keys.worker('w').runs)).toEqual([]);
    expect(await client.listPool()).toEqual([{ name: 'lic', capacity: 2_000_000n, used: 0n }]);
    // The re-staged run is claimed first again: its place in the order is kept.
    expect(await scripts.claimRun('w', 'tok', Date.now(), 0)).toMatchObject({ code: 'claimed', runId: retried, epoch: '2' });
    await scripts.deregisterWorker('w', 'tok', Date.now());
  });
});
