/**
 * What a read shows of a run upkeep has not caught up with: each case of
 * model/upkeep-view.ts as the reaper and reconciling will leave it (the
 * cases with a real Redis and the reaper itself: test/security/reader-reads.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { judgeLiveness } from '../../src/model/liveness.js';
import type { RunRecord } from '../../src/model/run-record.js';
import { asUpkeepLeavesIt, leaseLapsedReason, type WorkerSeen } from '../../src/model/upkeep-view.js';

const NOW = 1_000_000;
const LEASE = 30_000;

/** Worker w1, last heard from `ago` ms before NOW, its lease renewed then. */
function worker(ago: number): WorkerSeen {
  const heartbeatAt = NOW - ago;
  return { name: 'w1', heartbeatAt, liveness: judgeLiveness(heartbeatAt, heartbeatAt + LEASE, LEASE, NOW) };
}

const running: RunRecord = {
  id: 'r1', status: 'running', command: ['sleep', '60'], shell: false, cwd: '/', env: {}, resources: { gpu: 1 }, requires: 'gpu=1',
  priority: 0, labels: {}, stagedAt: NOW - 120_000, startedAt: NOW - 100_000, worker: 'w1', devices: [0], deadline: NOW + 1, seq: 1,
};

describe('a run as a read shows it', () => {
  it('running on a live worker: as stored; on one that missed beats: running, its worker not responding', () => {
    expect(asUpkeepLeavesIt(running, { status: 'running' }, [worker(1000)])).toEqual(running);
    expect(asUpkeepLeavesIt(running, { status: 'running' }, [worker(25_000)])).toMatchObject({
      status: 'running', workerResponding: false, reason: expect.stringMatching(/^worker w1 not responding \(last heartbeat 25s ago, lease ends in 5s\)$/) as unknown,
    });
  });

  it("of a worker whose lease ran out: lost with the reaper's reason, ended at the last heartbeat (never before its start)", () => {
    const lost = asUpkeepLeavesIt(running, { status: 'running' }, [worker(40_000)]);
    expect(lost).toMatchObject({ status: 'lost', reason: leaseLapsedReason('w1'), endedAt: NOW - 40_000, worker: 'w1' });
    expect(lost.workerResponding).toBeUndefined();
    expect(lost.deadline).toBeUndefined();
    expect(leaseLapsedReason('w1')).toBe('worker w1 stopped renewing its lease');
    const startedLate = { ...running, startedAt: NOW - 35_000 };
    expect(asUpkeepLeavesIt(startedLate, { status: 'running' }, [worker(40_000)]).endedAt).toBe(NOW - 35_000);
  });

  it('with a cancel pending: canceled; with retries left: staged again, off its worker, with the lost attempt when its history is read', () => {
    expect(asUpkeepLeavesIt(running, { status: 'running', cancelRequested: '1' }, [worker(40_000)])).toMatchObject({
      status: 'canceled', reason: 'canceled (worker w1 stopped renewing its lease)',
    });
    const retried = { ...running, retries: 2, restaged: 1, attempts: [{ attempt: 1, status: 'lost', worker: 'w0' }] };
    const staged = asUpkeepLeavesIt(retried, { status: 'running' }, [worker(40_000)], true);
    expect(staged).toMatchObject({ status: 'staged', restaged: 2, restagedReason: 'worker w1 stopped renewing its lease (re-staged 2 of 2)' });
    for (const gone of ['worker', 'devices', 'startedAt', 'endedAt'] as const) expect(staged[gone], gone).toBeUndefined();
    expect(staged.attempts).toEqual([
      { attempt: 1, status: 'lost', worker: 'w0' },
      { attempt: 2, worker: 'w1', startedAt: NOW - 100_000, endedAt: NOW, status: 'lost', reason: 'worker w1 stopped renewing its lease' },
    ]);
    expect(asUpkeepLeavesIt(retried, { status: 'running' }, [worker(40_000)]).attempts).toEqual(retried.attempts);
    // Retries spent: lost.
    expect(asUpkeepLeavesIt({ ...retried, restaged: 2 }, { status: 'running' }, [worker(40_000)]).status).toBe('lost');
  });

  it('ended, and retried from BullMQ (its job has no finishedOn): staged; ended as BullMQ left it otherwise', () => {
    const failed: RunRecord = { ...running, status: 'failed', exitCode: 3, endedAt: NOW, reason: 'exit code 3' };
    expect(asUpkeepLeavesIt(failed, { status: 'failed', finishedOn: String(NOW) }, [])).toEqual(failed);
    const staged = asUpkeepLeavesIt(failed, { status: 'failed' }, []);
    expect(staged).toMatchObject({ status: 'staged', reason: 'retried from BullMQ (it was failed)', resources: { gpu: 1 } });
    for (const gone of ['exitCode', 'endedAt', 'startedAt', 'worker'] as const) expect(staged[gone], gone).toBeUndefined();
  });
});
