/**
 * Fencing in the scripts: output and ends are stored only while the run is
 * held by the claim that produced them and its worker's registration holds
 * a live lease, and a lapsed lease stays lapsed. A run its stopped worker
 * terminated is re-staged or lost, never failed.
 */
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { Scripts } from '../../src/queue/scripts.js';
import type { WorkerRegistration } from '../../src/queue/worker-calls.js';
import { connectClient, newQueue, stagedShape } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

const registrationOf = (name: string, token: string, leaseMs: number, resources: string): WorkerRegistration => ({
  name, token, leaseMs, concurrency: 0, host: 'h', pid: 1, resources,
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
    const claim = await scripts.claimRun('w', 'tok', 0);
    expect(claim).toMatchObject({ code: 'claimed', runId: id, epoch: '1' });

    expect(await scripts.appendLog(id, 'w', 'tok', '1', [...line, { stream: 'stderr', line: 'oops' }])).toBe(2);
    expect(await scripts.appendLog(id, 'other', 'tok', '1', line)).toBe(0);
    expect(await scripts.appendLog(id, 'w', 'tok', '2', line)).toBe(0);
    expect(await scripts.appendLog(id, 'w', 'stale', '1', line)).toBe(0); // an older registration
    await scripts.finishRun({ runId: id, worker: 'w', token: 'tok', epoch: '1', status: 'completed', exitCode: 0, reason: 'exit code 0' });
    expect(await scripts.appendLog(id, 'w', 'tok', '1', line)).toBe(0); // ended
    expect(await client.readLog(id)).toEqual([
      expect.objectContaining({ kind: 'line', stream: 'stdout', line: 'hello' }),
      expect.objectContaining({ kind: 'line', stream: 'stderr', line: 'oops' }),
      expect.objectContaining({ kind: 'end', status: 'completed' }),
    ]);
    await scripts.deregisterWorker('w', 'tok');
  });
});

describe('heartbeat', () => {
  it('a lapsed lease is not revived by a heartbeat: the worker is fenced', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const registration = registrationOf('slow', 'tok', 300, '');
    expect(await scripts.registerWorker(registration)).toBe(true);
    expect(await scripts.heartbeat('slow', 'tok', 300)).toEqual({ cancels: [], held: [], drained: false, preempting: [] });
    await waitForLapse(client, 'slow');
    expect(await scripts.heartbeat('slow', 'tok', 300)).toBeUndefined();
    expect(await scripts.claimRun('slow', 'tok', 0)).toEqual({ code: 'fenced' });
    // Registering again under the same name works: the old registration is reaped.
    expect(await scripts.registerWorker({ ...registration, token: 'tok2' })).toBe(true);
    await scripts.deregisterWorker('slow', 'tok2');
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
    expect(await scripts.claimRun('cut', 'tok', 0)).toMatchObject({ code: 'claimed', runId: id });
    expect(await scripts.claimRun('cut', 'tok', 0)).toMatchObject({ code: 'claimed', runId: retried });
    const finish = { runId: id, worker: 'cut', token: 'tok', epoch: '1', status: 'failed' as const, signal: 'SIGTERM', reason: 'killed by signal SIGTERM' };
    const line = [{ stream: 'stdout' as const, line: 'late' }];

    expect(await scripts.finishRun({ ...finish, token: 'other' })).toEqual({ outcome: 'fenced' });
    await waitForLapse(client, 'cut');
    expect(await scripts.appendLog(id, 'cut', 'tok', '1', line)).toBe(0);
    expect(await scripts.finishRun(finish)).toEqual({ outcome: 'fenced' });
    expect(await scripts.finishRun({ ...finish, runId: retried, status: 'stopped', reason: 'x' })).toEqual({ outcome: 'fenced' });
    // Stored as it was (a read already shows it as the reaper will leave it: lost).
    expect(await client.redis.hmget(client.keys.run(id), 'status', 'worker')).toEqual(['running', 'cut']);
    expect(await client.getRun(id)).toMatchObject({ status: 'lost', reason: 'worker cut stopped renewing its lease', worker: 'cut' });
    expect(await client.redis.hget(client.keys.worker('cut').free, 'x')).toBe('0');
    expect(await client.readLog(id)).toEqual([]);

    // Registering again reaps the lapsed registration, as a reaper would.
    expect(await scripts.registerWorker(registrationOf('cut', 'tok2', 60_000, 'x=2'))).toBe(true);
    const lost = await client.getRun(id);
    expect(lost).toMatchObject({ status: 'lost', reason: 'worker cut stopped renewing its lease' });
    expect(lost.signal).toBeUndefined();
    expect(await client.getRun(retried)).toMatchObject({ status: 'staged', restaged: 1, restagedReason: 'worker cut stopped renewing its lease (re-staged 1 of 1)' });
    // The stale registration's late end still changes nothing.
    expect(await scripts.finishRun(finish)).toEqual({ outcome: 'fenced' });
    expect(await scripts.finishRun({ ...finish, token: 'tok2' })).toEqual({ outcome: 'movedOn', status: 'lost' });
    expect(await client.getRun(id)).toMatchObject({ status: 'lost' });
    await scripts.deregisterWorker('cut', 'tok2');
  });

  it('a worker deregistering after its lease ran out ends its runs with the lease reason', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const id = (await client.stage({ command: ['true'], resources: 'x=1' })).runs[0]!.id;
    expect(await scripts.registerWorker(registrationOf('late', 'tok', 1000, 'x=1'))).toBe(true);
    expect(await scripts.claimRun('late', 'tok', 0)).toMatchObject({ code: 'claimed', runId: id });
    await waitForLapse(client, 'late');
    expect(await scripts.deregisterWorker('late', 'tok')).toBe(true);
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
      expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'claimed', runId: id });
    }
    const stopped = { worker: 'w', token: 'tok', epoch: '1', status: 'stopped' as const, signal: 'SIGTERM', reason: 'its worker w was stopped (second interrupt)' };

    expect(await scripts.finishRun({ ...stopped, runId: retried })).toEqual({ outcome: 'recorded', status: 'staged' });
    expect(await scripts.finishRun({ ...stopped, runId: plain })).toEqual({ outcome: 'recorded', status: 'lost' });

    const again = await client.getRun(retried);
    expect(again).toMatchObject({ status: 'staged', retries: 2, restaged: 1, restagedReason: 'its worker w was stopped (second interrupt) (re-staged 1 of 2)' });
    expect(again.worker).toBeUndefined();
    expect(again.signal).toBeUndefined();
    expect(await client.redis.zrange(client.keys.staged(stagedShape('lic=1,x=1')), 0, -1)).toEqual([retried, later]);
    const lost = await client.getRun(plain);
    expect(lost).toMatchObject({ status: 'lost', reason: 'its worker w was stopped (second interrupt)', worker: 'w' });
    expect(lost.signal).toBeUndefined();
    expect((await client.readLog(plain)).at(-1)).toMatchObject({ kind: 'end', status: 'lost' });
    expect(await client.redis.hgetall(client.keys.worker('w').free)).toEqual({ x: '2' });
    expect(await client.redis.hget(client.keys.worker('w').info, 'running')).toBe('0');
    expect(await client.redis.smembers(client.keys.worker('w').runs)).toEqual([]);
    expect(await client.listPool()).toEqual([{ name: 'lic', capacity: 2_000_000n, used: 0n }]);
    // The re-staged run is claimed first again: its place in the order is kept.
    expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'claimed', runId: retried, epoch: '2' });
    await scripts.deregisterWorker('w', 'tok');
  });
});

describe('a running run whose cancellation was requested, then its worker went', () => {
  const pendingCancel = async (client: FitqClient, scripts: Scripts, worker: string, leaseMs: number) => {
    await client.setPool('lic=3');
    const ids = [];
    // Two with retries left (one without a cancel, to compare), one without retries.
    for (const retries of [2, 2, 0]) ids.push((await client.stage({ command: ['true'], resources: 'x=1 lic=1', retries })).runs[0]!.id);
    const [canceled, restaged, plain] = ids as [string, string, string];
    expect(await scripts.registerWorker(registrationOf(worker, 'tok', leaseMs, 'x=3'))).toBe(true);
    for (const id of ids) expect(await scripts.claimRun(worker, 'tok', 0)).toMatchObject({ code: 'claimed', runId: id });
    for (const id of [canceled, plain]) expect(await scripts.cancelRun(id)).toMatchObject({ outcome: 'requested' });
    return { canceled, restaged, plain };
  };

  /** The run ended canceled for `reason`, exactly once, and is not staged. */
  const expectCanceled = async (client: FitqClient, id: string, reason: string) => {
    const run = await client.getRun(id);
    expect(run).toMatchObject({ status: 'canceled', reason: `canceled (${reason})`, epoch: 1 });
    expect(run.restaged).toBeUndefined();
    expect(await client.redis.hget(client.keys.run(id), 'cancelRequested')).toBeNull();
    expect(await client.redis.zscore(client.keys.staged(stagedShape('lic=1,x=1')), id)).toBeNull();
    expect((await client.readLog(id)).map((entry) => entry.kind)).toEqual(['end']);
    expect((await client.readLog(id)).at(-1)).toMatchObject({ kind: 'end', status: 'canceled' });
  };

  it('ends canceled when its worker is reaped (lease lapsed), with or without retries left, its pool share returned once', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const { canceled, restaged, plain } = await pendingCancel(client, scripts, 'gone', 1000);
    const { startedAt } = await client.getRun(canceled);
    await waitForLapse(client, 'gone');
    expect((await scripts.reapWorkers()).reaped).toEqual(['gone']);

    const reason = 'worker gone stopped renewing its lease';
    await expectCanceled(client, canceled, reason);
    await expectCanceled(client, plain, reason);
    expect((await client.getRun(canceled)).endedAt).toBeGreaterThanOrEqual(startedAt!);
    expect(await client.getRun(restaged)).toMatchObject({ status: 'staged', restaged: 1 });
    expect(await client.listPool()).toEqual([{ name: 'lic', capacity: 3_000_000n, used: 0n }]);
    // Reaping again changes nothing; a new worker gets the re-staged run only.
    expect((await scripts.reapWorkers()).reaped).toEqual([]);
    expect(await client.listPool()).toEqual([{ name: 'lic', capacity: 3_000_000n, used: 0n }]);
    expect(await scripts.registerWorker(registrationOf('next', 'tok', 60_000, 'x=3'))).toBe(true);
    expect(await scripts.claimRun('next', 'tok', 0)).toMatchObject({ code: 'claimed', runId: restaged, epoch: '2' });
    expect(await scripts.claimRun('next', 'tok', 0)).toMatchObject({ code: 'idle' });
    await expectCanceled(client, canceled, reason);
    await scripts.deregisterWorker('next', 'tok');
  });

  it('ends canceled when its worker deregisters or registers again', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const first = await pendingCancel(client, scripts, 'leaving', 60_000);
    expect(await scripts.deregisterWorker('leaving', 'tok')).toBe(true);
    await expectCanceled(client, first.canceled, 'worker leaving stopped');
    await expectCanceled(client, first.plain, 'worker leaving stopped');
    expect(await client.getRun(first.restaged)).toMatchObject({ status: 'staged' });
    expect(await client.listPool()).toEqual([{ name: 'lic', capacity: 3_000_000n, used: 0n }]);

    const client2 = await connectClient(newQueue());
    const scripts2 = new Scripts(client2.redis, client2.keys, 100);
    const second = await pendingCancel(client2, scripts2, 'back', 1000);
    await waitForLapse(client2, 'back');
    expect(await scripts2.registerWorker(registrationOf('back', 'tok2', 60_000, 'x=3'))).toBe(true);
    await expectCanceled(client2, second.canceled, 'worker back stopped renewing its lease');
    await expectCanceled(client2, second.plain, 'worker back stopped renewing its lease');
    expect(await client2.getRun(second.restaged)).toMatchObject({ status: 'staged' });
    expect(await client2.listPool()).toEqual([{ name: 'lic', capacity: 3_000_000n, used: 0n }]);
    expect(await scripts2.claimRun('back', 'tok2', 0)).toMatchObject({ code: 'claimed', runId: second.restaged });
    expect(await scripts2.claimRun('back', 'tok2', 0)).toMatchObject({ code: 'idle' });
    await scripts2.deregisterWorker('back', 'tok2');
  });

  it('ends canceled when its stopped worker terminated it (finishRun "stopped"), releasing both shares', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const { canceled, restaged, plain } = await pendingCancel(client, scripts, 'w', 60_000);
    const stopped = { worker: 'w', token: 'tok', epoch: '1', status: 'stopped' as const, signal: 'SIGTERM', reason: 'its worker w was stopped (second interrupt)' };
    expect(await scripts.finishRun({ ...stopped, runId: canceled })).toEqual({ outcome: 'recorded', status: 'canceled' });
    expect(await scripts.finishRun({ ...stopped, runId: plain })).toEqual({ outcome: 'recorded', status: 'canceled' });
    expect(await scripts.finishRun({ ...stopped, runId: restaged })).toEqual({ outcome: 'recorded', status: 'staged' });
    await expectCanceled(client, canceled, 'its worker w was stopped (second interrupt)');
    await expectCanceled(client, plain, 'its worker w was stopped (second interrupt)');
    // A second end of the same claim, or the worker leaving, changes nothing.
    expect(await scripts.finishRun({ ...stopped, runId: canceled })).toEqual({ outcome: 'movedOn', status: 'canceled' });
    expect(await client.redis.hgetall(client.keys.worker('w').free)).toEqual({ x: '3' });
    expect(await client.listPool()).toEqual([{ name: 'lic', capacity: 3_000_000n, used: 0n }]);
    expect(await scripts.deregisterWorker('w', 'tok')).toBe(true);
    await expectCanceled(client, canceled, 'its worker w was stopped (second interrupt)');
  });
});

describe('dropHold', () => {
  it('drops the hold of the registration under its token only: a stale process of the same name drops nothing', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    // An old registration, cut off past its lease, then replaced under the same name.
    expect(await scripts.registerWorker(registrationOf('w', 'old', 1000, 'x=2'))).toBe(true);
    await waitForLapse(client, 'w');
    expect(await scripts.registerWorker(registrationOf('w', 'new', 60_000, 'x=2'))).toBe(true);
    const long = (await client.stage({ command: ['true'], resources: 'x=1' })).runs[0]!.id;
    const big = (await client.stage({ command: ['true'], resources: 'x=2' })).runs[0]!.id;
    expect(await scripts.claimRun('w', 'new', 0)).toMatchObject({ code: 'claimed', runId: long });
    expect(await scripts.claimRun('w', 'new', 0)).toMatchObject({ code: 'waiting', holding: big });
    expect(await client.redis.hgetall(client.keys.holds)).toEqual({ [big]: 'w' });

    // The stale process lets go on its way out: the live worker's hold stays.
    expect(await scripts.dropHold('w', 'old')).toBe(false);
    expect(await client.redis.hgetall(client.keys.holds)).toEqual({ [big]: 'w' });
    expect(await client.redis.hget(client.keys.worker('w').info, 'holding')).toBe(big);
    expect(await scripts.dropHold('nobody', 'new')).toBe(false);

    expect(await scripts.dropHold('w', 'new')).toBe(true);
    expect(await client.redis.hgetall(client.keys.holds)).toEqual({});
    expect(await client.redis.hget(client.keys.worker('w').info, 'holding')).toBeNull();
    expect(await scripts.dropHold('w', 'new')).toBe(false);
    await scripts.deregisterWorker('w', 'new');
  });
});
