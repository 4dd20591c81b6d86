/**
 * Which end a worker records for a run, and what it logs about it: never a
 * completion or failure that was not recorded.
 */
import { describe, expect, it } from 'vitest';
import { endingMessage, endingToRecord, stoppedReason, type EndingRun, type RunEnding } from '../../src/worker/run-ending.js';
import { CANCELED, requestStop, type RunStop } from '../../src/worker/run-stop.js';

const ran: EndingRun = { started: true, terminated: false };
const exited0: RunEnding = { status: 'completed', exitCode: 0, reason: 'exit code 0' };
const killed: RunEnding = { status: 'failed', signal: 'SIGTERM', reason: 'killed by signal SIGTERM' };
const why = stoppedReason('w1', 'second interrupt');
const workerStop: RunStop = { cause: 'worker-stop', reason: why };

/** The stop a run keeps when these are asked for it, in this order. */
function stopAfter(...stops: RunStop[]): RunStop | undefined {
  const run: { stop?: RunStop } = {};
  for (const stop of stops) requestStop(run, stop);
  return run.stop;
}

describe('endingToRecord', () => {
  it('records a run fitq terminated (or never started) for a stopping worker as stopped, and one that ended first as it ended', () => {
    expect(why).toBe('its worker w1 was stopped (second interrupt)');
    expect(endingToRecord({ ...ran, stop: workerStop, terminated: true }, killed)).toEqual({ status: 'stopped', reason: why });
    expect(endingToRecord({ ...ran, stop: workerStop, started: false }, { status: 'failed', reason: 'not started' })).toEqual({ status: 'stopped', reason: why });
    expect(endingToRecord({ ...ran, stop: workerStop }, { status: 'failed', exitCode: 3, reason: 'exit code 3' })).toEqual({ status: 'failed', reason: 'exit code 3' });
    expect(endingToRecord({ ...ran, stop: stopAfter(workerStop, CANCELED), terminated: true }, killed)).toEqual({
      status: 'canceled',
      reason: 'canceled (killed by signal SIGTERM)',
    });
    expect(endingToRecord(ran, killed)).toEqual({ status: 'failed', reason: 'killed by signal SIGTERM' });
  });
});

describe('endingMessage', () => {
  const toRecord = { status: 'completed' as const, reason: 'exit code 0' };

  it('says a run completed only when that was recorded', () => {
    expect(endingMessage('r1', ran, exited0, toRecord, { outcome: 'recorded', status: 'completed' })).toEqual({ level: 'info', message: 'Run r1 completed' });
    expect(endingMessage('r1', ran, exited0, toRecord, { outcome: 'movedOn', status: 'lost' })).toEqual({
      level: 'warn',
      message: "Run r1 exited 0 but its result was not recorded: the run is no longer this claim's (it is lost now)",
    });
    expect(endingMessage('r1', ran, exited0, toRecord, { outcome: 'movedOn', status: undefined }).message).toBe(
      'Run r1 exited 0 but its result was not recorded: the run no longer exists',
    );
    expect(endingMessage('r1', ran, exited0, toRecord, new Error('Connection is closed.')).message).toBe(
      'Run r1 exited 0 but its result was not recorded: Connection is closed.',
    );
    expect(endingMessage('r1', ran, killed, { status: 'failed', reason: killed.reason }, { outcome: 'fenced' }).message).toMatch(
      /^Run r1 was killed by signal SIGTERM but its result was not recorded: this worker no longer holds its registration/,
    );
  });

  it('says what became of a run its stopping worker ended', () => {
    const stopped = { status: 'stopped' as const, reason: why };
    const terminated = { ...ran, stop: workerStop, terminated: true };
    expect(endingMessage('r1', terminated, killed, stopped, { outcome: 'recorded', status: 'staged' }).message).toBe(
      'Run r1 terminated (signal SIGTERM) as its worker w1 was stopped (second interrupt): re-staged',
    );
    expect(endingMessage('r1', { ...ran, stop: workerStop, started: false }, { status: 'failed', reason: 'not started' }, stopped, { outcome: 'recorded', status: 'lost' }).message).toBe(
      'Run r1 not started as its worker w1 was stopped (second interrupt): lost',
    );
  });
});

describe('a run its worker terminated past its time limit', () => {
  const timeout: RunStop = { cause: 'timeout', reason: 'time limit of 1s reached' };
  const timedOut = { ...ran, stop: timeout };

  it('ends timeout with the limit in its reason, unless it ended first, was canceled or its worker was stopping', () => {
    expect(endingToRecord({ ...timedOut, terminated: true }, killed)).toEqual({ status: 'timeout', reason: 'time limit of 1s reached (killed by signal SIGTERM)' });
    expect(endingToRecord({ ...timedOut, terminated: true }, exited0)).toEqual({ status: 'timeout', reason: 'time limit of 1s reached (exit code 0)' });
    expect(endingToRecord({ ...timedOut, terminated: false }, exited0)).toEqual({ status: 'completed', reason: 'exit code 0' });
    expect(endingToRecord({ ...timedOut, terminated: true, stop: stopAfter(timeout, CANCELED) }, killed)).toMatchObject({ status: 'canceled' });
    expect(endingToRecord({ ...timedOut, terminated: true, stop: stopAfter(timeout, workerStop) }, killed)).toEqual({ status: 'stopped', reason: why });
    const recorded = { status: 'timeout' as const, reason: 'time limit of 1s reached (killed by signal SIGTERM)' };
    expect(endingMessage('r1', { ...timedOut, terminated: true }, killed, recorded, { outcome: 'recorded', status: 'timeout' })).toEqual({
      level: 'info',
      message: 'Run r1 timed out: time limit of 1s reached (killed by signal SIGTERM)',
    });
  });
});
