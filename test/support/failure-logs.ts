/**
 * What a failed test's workers said: their last log lines, printed with the
 * failure, so a test that failed only on a loaded CI machine can be read
 * afterwards (a worker's log is otherwise gone with the test).
 */
import type { TestContext } from 'vitest';

/** How many of a worker's last log lines are printed. */
const LAST_LINES = 60;

/** Whether the test `context` belongs to has failed (a timeout too). */
export function testFailed(context: TestContext): boolean {
  return context.task.result?.state === 'fail';
}

/** Prints `entries` (a worker's JSON log) under `label`, when the test failed. */
export function printWorkerLog(context: TestContext, label: string, entries: readonly Record<string, unknown>[]): void {
  if (!testFailed(context)) return;
  const lines = entries.slice(-LAST_LINES).map((entry) => {
    const at = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : '?';
    const run = entry.runId ? ` [${String(entry.runId)}]` : '';
    return `  ${at}${run} ${entry.output === undefined ? String(entry.msg) : `output: ${String(entry.output)}`}`;
  });
  process.stderr.write(`\n--- ${context.task.name}: ${label}, last ${lines.length} of ${entries.length} log lines\n${lines.join('\n')}\n`);
}
