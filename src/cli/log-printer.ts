/**
 * How `fitq logs`, `logs -f` and `stage --follow` print a run's log: each
 * line to stdout or stderr, as the run wrote it, and fitq's notes on stderr
 * where they belong (a restart; lines missing, how many and why: see
 * model/logs.ts, OutputGaps).
 */
import { OutputGaps, type LogEntry } from '../model/logs.js';
import { restagedNote } from '../present/run-end.js';

export class LogPrinter {
  /** Whether any line of the run was printed. */
  printedLines = false;
  private readonly gaps: OutputGaps;

  /** `maxLines`: the lines a run's log keeps (the client's logMaxLines). */
  constructor(maxLines: number) {
    this.gaps = new OutputGaps(maxLines);
  }

  /** Prints one entry, in the order read. */
  readonly print = (entry: LogEntry): void => {
    for (const note of this.gaps.notesBefore(entry)) process.stderr.write(`${note}\n`);
    if (entry.kind === 'restaged') process.stderr.write(`${restagedNote(entry.reason)}\n`);
    if (entry.kind !== 'line') return;
    this.printedLines = true;
    (entry.stream === 'stderr' ? process.stderr : process.stdout).write(`${entry.line}\n`);
  };
}

/**
 * Resolves once what was written to stdout has left the process. On a full
 * pipe Node queues stdout's writes while one to stderr may go at once, so
 * on a shared pipe (`2>&1`) a note written after the run's output could
 * land inside it: fitq's notes after the output wait for this.
 */
export function stdoutFlushed(): Promise<void> {
  return new Promise((resolve) => process.stdout.write('', () => resolve()));
}
