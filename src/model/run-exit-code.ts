/**
 * A run's exit code, as the commands that wait for runs (`fitq wait`, `logs
 * -f`, `stage --wait`) exit with it: its own code passed on as it is, the
 * reason it ended otherwise told by one of fitq's exit codes (exit-codes.ts).
 */
import { constants } from 'node:os';
import { EXIT } from '../exit-codes.js';
import type { RunRecord } from './run-record.js';

/** A run killed by a signal exits 128 + the signal's number, as a shell reports it (137 for SIGKILL). */
const SIGNAL_BASE = 128;

/**
 * An ended run's exit code: completed 0; failed its exit code, 128 + the
 * signal's number, or 1 when it never started; timeout 124; canceled, lost
 * and rejected 1 (the reason goes on stderr).
 */
export function runExitCode(run: RunRecord): number {
  if (run.status === 'completed') return EXIT.ok;
  if (run.status === 'timeout') return EXIT.timeLimit;
  if (run.status === 'failed') {
    if (run.exitCode !== undefined && run.exitCode !== 0) return run.exitCode;
    const number = run.signal ? constants.signals[run.signal as keyof typeof constants.signals] : undefined;
    return number !== undefined ? SIGNAL_BASE + number : EXIT.failed;
  }
  return EXIT.failed;
}

/** The rule of runExitCode in words, for the help of the commands that exit with a run's code. */
export const RUN_EXIT_RULE =
  `0 completed; failed: its exit code, or ${SIGNAL_BASE} + the signal's number, or ${EXIT.failed} when it never started; ` +
  `timeout ${EXIT.timeLimit}; canceled, lost, rejected ${EXIT.failed} (the reason on stderr)`;

/** The first run (in the order given) that did not complete, if any. */
export function firstFailure(runs: readonly RunRecord[]): RunRecord | undefined {
  return runs.find((run) => run.status !== 'completed');
}

/** Of the runs waited for (`fitq wait`, `stage --wait`): 0 if every one completed, else the code of the first, in the order given, that did not. */
export function waitExitCode(runs: readonly RunRecord[]): number {
  const failure = firstFailure(runs);
  return failure ? runExitCode(failure) : EXIT.ok;
}
