/**
 * fitq's exit codes: the one table every command exits by (README, "Exit
 * codes"). Where a command waits for runs (`fitq wait`, `logs -f`, `stage
 * --wait`), a run's own exit code is passed on as it is: it can be any of
 * these too, and `fitq runs show ID` (or `--json`) tells them apart.
 */
import { constants } from 'node:os';
import type { RunRecord } from './queue/run-record.js';

export const EXIT = {
  /** Done; the runs waited for completed. */
  ok: 0,
  /**
   * Not done, though the input was right: Redis unreachable or refusing a
   * command, a run that changed meanwhile (claimed before `fitq update`
   * wrote, restarted by someone else). And a run that ended canceled, lost
   * or rejected, or failed before it started (command not found).
   */
  failed: 1,
  /** A selection (--status, --label, --array) matched no run: nothing done, as grep and pkill exit when nothing matches. */
  nothingMatched: 1,
  /**
   * Bad input, nothing done: a bad flag or value, an unknown run or array,
   * a run in a state the command does not change (`fitq update` of a
   * running run, `fitq restart` of one that has not ended).
   */
  usage: 2,
  /** `fitq wait --timeout` gave up before every run ended (EX_TEMPFAIL: waiting again may see them end). */
  gaveUp: 75,
  /** The run ended `timeout`: past its time limit, as GNU timeout exits. */
  timeLimit: 124,
  /** Interrupted (Ctrl-C, SIGTERM) while waiting for runs or following one: the runs go on. */
  interrupted: 130,
} as const;

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
