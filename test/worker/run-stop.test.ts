/**
 * A run's stop: which one it keeps when several are asked (the first, unless
 * a later one outranks it: cancel > abandon = worker-stop = preempt > timeout), and
 * what each stop makes of each way its process can end (endingToRecord's
 * whole table). Then one through a real worker: a run canceled during the
 * grace after its time limit ends canceled, not timeout.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { endingToRecord, type EndingRun, type RunEnding } from '../../src/worker/run-ending.js';
import { CANCELED, requestStop, type RunStop, type StopCause } from '../../src/worker/run-stop.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue } from '../support/fitq.js';

const stops: Record<StopCause, RunStop> = {
  cancel: CANCELED,
  abandon: { cause: 'abandon', reason: 'its worker lost its registration' },
  'worker-stop': { cause: 'worker-stop', reason: 'its worker w1 was stopped (second interrupt)' },
  timeout: { cause: 'timeout', reason: 'time limit of 1s reached' },
  preempt: { cause: 'preempt', reason: 'preempted for run r42' },
};

/** The stop a run keeps when these are asked for it, in this order. */
function stopAfter(...asked: RunStop[]): RunStop | undefined {
  const run: { stop?: RunStop } = {};
  for (const stop of asked) requestStop(run, stop);
  return run.stop;
}

describe('requestStop', () => {
  it('keeps the first stop asked', () => {
    expect(stopAfter()).toBeUndefined();
    for (const stop of Object.values(stops)) expect(stopAfter(stop)).toBe(stop);
  });

  // [first asked, then asked, kept]
  it.each([
    ['cancel', 'abandon', 'cancel'],
    ['cancel', 'worker-stop', 'cancel'],
    ['cancel', 'timeout', 'cancel'],
    ['abandon', 'cancel', 'cancel'],
    ['abandon', 'worker-stop', 'abandon'],
    ['abandon', 'timeout', 'abandon'],
    ['worker-stop', 'cancel', 'cancel'],
    ['worker-stop', 'abandon', 'worker-stop'],
    ['worker-stop', 'timeout', 'worker-stop'],
    ['timeout', 'cancel', 'cancel'],
    ['timeout', 'abandon', 'abandon'],
    ['timeout', 'worker-stop', 'worker-stop'],
    ['preempt', 'cancel', 'cancel'],
    ['preempt', 'abandon', 'preempt'],
    ['preempt', 'worker-stop', 'preempt'],
    ['preempt', 'timeout', 'preempt'],
    ['cancel', 'preempt', 'cancel'],
    ['worker-stop', 'preempt', 'worker-stop'],
    ['timeout', 'preempt', 'preempt'],
  ] as const)('%s, then %s: keeps %s', (first, then, kept) => {
    expect(stopAfter(stops[first], stops[then])).toBe(stops[kept]);
    // Once taken over, it stays so whatever comes next.
    expect(stopAfter(stops[first], stops[then], stops[first])).toBe(stops[kept]);
  });

  it('between two of the same rank, keeps the first reason', () => {
    const later: RunStop = { cause: 'abandon', reason: 'Redis no longer holds it for its worker (its claim was lost or removed)' };
    expect(stopAfter(stops.abandon, later)).toBe(stops.abandon);
    expect(stopAfter(stops['worker-stop'], later)).toBe(stops['worker-stop']);
    expect(stopAfter(CANCELED, { cause: 'cancel', reason: 'canceled again' })).toBe(CANCELED);
    const longer: RunStop = { cause: 'timeout', reason: 'time limit of 2s reached' };
    expect(stopAfter(stops.timeout, longer)).toBe(stops.timeout);
  });
});

describe('endingToRecord: each stop by each end of its process', () => {
  const given = 'its worker lost its registration';
  const stoppedBy = 'its worker w1 was stopped (second interrupt)';
  /** How the process ended, and whether it started and the worker terminated it. */
  const ends: Record<string, { run: Omit<EndingRun, 'stop'>; outcome: RunEnding }> = {
    'exited 0 on its own': { run: { started: true, terminated: false }, outcome: { status: 'completed', exitCode: 0, reason: 'exit code 0' } },
    'exited 3 on its own': { run: { started: true, terminated: false }, outcome: { status: 'failed', exitCode: 3, reason: 'exit code 3' } },
    'killed once terminated': { run: { started: true, terminated: true }, outcome: { status: 'failed', signal: 'SIGTERM', reason: 'killed by signal SIGTERM' } },
    'exited 0 once terminated': { run: { started: true, terminated: true }, outcome: { status: 'completed', exitCode: 0, reason: 'exit code 0' } },
    'could not start': { run: { started: true, terminated: false }, outcome: { status: 'failed', reason: 'command not found: nope' } },
    'never started': { run: { started: false, terminated: false }, outcome: { status: 'failed', reason: 'not started' } },
    'returned for want of descriptors': {
      run: { started: true, terminated: false },
      outcome: { status: 'returned', reason: 'its worker w1 ran out of file descriptors' },
    },
    rejected: { run: { started: false, terminated: false }, outcome: { status: 'rejected', reason: 'rejected: it is not signed' } },
  };

  // [how it ended, stop, status recorded, reason recorded]
  it.each([
    ['exited 0 on its own', undefined, 'completed', 'exit code 0'],
    ['exited 0 on its own', 'cancel', 'canceled', 'canceled (exit code 0)'],
    ['exited 0 on its own', 'abandon', 'completed', 'exit code 0'],
    ['exited 0 on its own', 'worker-stop', 'completed', 'exit code 0'],
    ['exited 0 on its own', 'timeout', 'completed', 'exit code 0'],
    ['exited 0 on its own', 'preempt', 'preempted', 'preempted for run r42'],

    ['exited 3 on its own', undefined, 'failed', 'exit code 3'],
    ['exited 3 on its own', 'cancel', 'canceled', 'canceled (exit code 3)'],
    ['exited 3 on its own', 'abandon', 'failed', 'exit code 3'],
    ['exited 3 on its own', 'worker-stop', 'failed', 'exit code 3'],
    ['exited 3 on its own', 'timeout', 'failed', 'exit code 3'],
    ['exited 3 on its own', 'preempt', 'preempted', 'preempted for run r42'],

    ['killed once terminated', undefined, 'failed', 'killed by signal SIGTERM'],
    ['killed once terminated', 'cancel', 'canceled', 'canceled (killed by signal SIGTERM)'],
    ['killed once terminated', 'abandon', 'stopped', given],
    ['killed once terminated', 'worker-stop', 'stopped', stoppedBy],
    ['killed once terminated', 'timeout', 'timeout', 'time limit of 1s reached (killed by signal SIGTERM)'],
    ['killed once terminated', 'preempt', 'preempted', 'preempted for run r42'],

    ['exited 0 once terminated', undefined, 'completed', 'exit code 0'],
    ['exited 0 once terminated', 'cancel', 'canceled', 'canceled (exit code 0)'],
    ['exited 0 once terminated', 'abandon', 'stopped', given],
    ['exited 0 once terminated', 'worker-stop', 'stopped', stoppedBy],
    ['exited 0 once terminated', 'timeout', 'timeout', 'time limit of 1s reached (exit code 0)'],
    ['exited 0 once terminated', 'preempt', 'preempted', 'preempted for run r42'],

    ['could not start', undefined, 'failed', 'command not found: nope'],
    ['could not start', 'cancel', 'canceled', 'canceled (command not found: nope)'],
    ['could not start', 'abandon', 'failed', 'command not found: nope'],
    ['could not start', 'worker-stop', 'failed', 'command not found: nope'],
    ['could not start', 'timeout', 'failed', 'command not found: nope'],
    ['could not start', 'preempt', 'preempted', 'preempted for run r42'],

    ['never started', undefined, 'failed', 'not started'],
    ['never started', 'cancel', 'canceled', 'canceled (not started)'],
    ['never started', 'abandon', 'stopped', given],
    ['never started', 'worker-stop', 'stopped', stoppedBy],
    ['never started', 'timeout', 'failed', 'not started'],
    ['never started', 'preempt', 'preempted', 'preempted for run r42'],

    ['returned for want of descriptors', undefined, 'returned', 'its worker w1 ran out of file descriptors'],
    ['returned for want of descriptors', 'cancel', 'canceled', 'canceled (its worker w1 ran out of file descriptors)'],
    ['returned for want of descriptors', 'abandon', 'returned', 'its worker w1 ran out of file descriptors'],
    ['returned for want of descriptors', 'worker-stop', 'returned', 'its worker w1 ran out of file descriptors'],
    ['returned for want of descriptors', 'timeout', 'returned', 'its worker w1 ran out of file descriptors'],
    ['returned for want of descriptors', 'preempt', 'returned', 'its worker w1 ran out of file descriptors'],

    ['rejected', undefined, 'rejected', 'rejected: it is not signed'],
    ['rejected', 'cancel', 'rejected', 'rejected: it is not signed'],
    ['rejected', 'abandon', 'rejected', 'rejected: it is not signed'],
    ['rejected', 'worker-stop', 'rejected', 'rejected: it is not signed'],
    ['rejected', 'timeout', 'rejected', 'rejected: it is not signed'],
    ['rejected', 'preempt', 'rejected', 'rejected: it is not signed'],
  ] as const)('%s, stop %s: %s, %j', (end, cause, status, reason) => {
    const { run, outcome } = ends[end]!;
    expect(endingToRecord({ ...run, stop: cause && stops[cause] }, outcome)).toEqual({ status, reason });
  });
});

describe('a stop through a real worker', () => {
  it('a run canceled in the grace after its time limit ends canceled, with what it then exited with', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const go = join(mkdtempSync(join(tmpdir(), 'fitq-stop-')), 'go');
    // Past its limit it traps SIGTERM and goes on until the test lets it end.
    const script = `trap "echo got TERM; while [ ! -e '${go}' ]; do sleep 0.05; done; exit 0" TERM; while :; do sleep 0.1; done`;
    const staged = await fitq(['stage', '--time-limit', '1', '--shell', '--', script], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const id = staged.stdout.trim();
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--kill-grace', '120']);
    await worker.waitForMessage(`Run ${id} time limit of 1s reached: sending SIGTERM, SIGKILL after 120s`);
    const cancel = await fitq(['cancel', id, '--no-wait'], { queue });
    expect(cancel.exitCode, cancel.stderr).toBe(0);
    await worker.waitForMessage(`Canceling run ${id}`);
    writeFileSync(go, '');
    const run = await client.waitForEnd(id);
    expect(run).toMatchObject({ status: 'canceled', exitCode: 0, reason: 'canceled (exit code 0)' });
    await worker.waitForMessage(`Run ${id} canceled`);
  });
});
