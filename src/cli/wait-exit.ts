/**
 * The exit code of `fitq wait` and `fitq stage --wait` (README, "Waiting"):
 * one run, its own; many, 0 if all completed, else the first failure's, in
 * the order given.
 */
import { constants } from 'node:os';
import type { RunRecord } from '../queue/run-record.js';

/** `fitq wait --timeout` gave up before every run ended (EX_TEMPFAIL: waiting again may see them end). */
export const WAIT_TIMEOUT_EXIT = 75;

/** `timeout`: the run passed its time limit (as GNU timeout exits). */
const TIME_LIMIT_EXIT = 124;

/**
 * An ended run's code: completed 0; failed its exit code, 128 + the
 * signal's number, or 1 when it never started; timeout 124; canceled,
 * lost and rejected 1.
 */
export function runExitCode(run: RunRecord): number {
  if (run.status === 'completed') return 0;
  if ((run.status as string) === 'timeout') return TIME_LIMIT_EXIT;
  if (run.status === 'failed') {
    if (run.exitCode !== undefined && run.exitCode !== 0) return run.exitCode;
    const number = run.signal ? constants.signals[run.signal as keyof typeof constants.signals] : undefined;
    return number !== undefined ? 128 + number : 1;
  }
  return 1;
}

/** The first run (in the order given) that did not complete, if any. */
export function firstFailure(runs: readonly RunRecord[]): RunRecord | undefined {
  return runs.find((run) => run.status !== 'completed');
}

/** 0 if every run completed, else the first failure's code. */
export function waitExitCode(runs: readonly RunRecord[]): number {
  const failure = firstFailure(runs);
  return failure ? runExitCode(failure) : 0;
}
