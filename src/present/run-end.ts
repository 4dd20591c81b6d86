/**
 * How `fitq logs` and `fitq wait` tell what became of a run: a line on
 * stderr (the exit code is model/run-exit-code.ts's runExitCode); the
 * dashboard's run page says it in the same words.
 */
import { oneLine } from '../text/quote.js';
import type { RunRecord } from '../model/run-record.js';

/** Why it ended, without repeating the status: "rejected: x" -> "x". */
function reasonOf(run: RunRecord): string {
  const reason = oneLine(run.reason ?? '');
  return reason.startsWith(`${run.status}: `) ? reason.slice(run.status.length + 2) : reason;
}

/** "run X completed", "run X failed: exit code 3", "run X lost: worker w1 stopped renewing its lease". */
export function describeEnd(run: RunRecord): string {
  const reason = reasonOf(run);
  if (run.status === 'completed' || reason === '') return `run ${run.id} ${run.status}`;
  // "canceled while staged", "canceled (signal SIGTERM)" read on as they are.
  if (reason.startsWith(`${run.status} `)) return `run ${run.id} ${reason}`;
  return `run ${run.id} ${run.status}: ${reason}`;
}

/** Whether an ended run never had a process of its own (rejected, canceled while staged, command not found). */
function neverStarted(run: RunRecord): boolean {
  return run.status === 'rejected' || (run.status !== 'lost' && run.exitCode === undefined && run.signal === undefined);
}

/**
 * The note `fitq logs ID` prints when a run has no output to show, because
 * it has not started or never could; undefined when there is nothing to say.
 */
export function noOutputNote(run: RunRecord, printedLines: boolean): string | undefined {
  if (run.status === 'staged') {
    const what = printedLines ? 'is staged again: no output of its next attempt yet' : 'is staged: no output yet';
    return `run ${run.id} ${what} (fitq runs shows why it waits)`;
  }
  if (printedLines || !neverStarted(run) || run.status === 'running' || run.status === 'completed') return undefined;
  const reason = reasonOf(run);
  return `run ${run.id} ended ${run.status} before starting${reason ? `: ${reason}` : ''}`;
}

/** The line `fitq logs` prints where a run was staged again and its next attempt's output follows. */
export function restagedNote(reason: string): string {
  return `--- fitq: re-staged (${oneLine(reason)}); the next attempt's output follows ---`;
}
