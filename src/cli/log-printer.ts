/**
 * How `fitq logs`, `logs -f` and `stage --follow` print a run's log: each
 * line to stdout or stderr, as the run wrote it, and fitq's notes on stderr
 * where they belong (a restart; lines missing, how many and why: see
 * model/logs.ts, OutputGaps), in the order read, even on one pipe.
 */
import { OutputGaps, type LogEntry } from '../model/logs.js';
import { restagedNote } from '../present/run-end.js';

type Stream = NodeJS.WriteStream;

/**
 * Writes to stdout and stderr in the order asked. On a full pipe Node
 * queues a stream's writes while the other's may go at once, so on a
 * shared pipe (`2>&1` read late) a line could overtake those before it: a
 * line for one stream waits until what the other still holds has left.
 */
class OrderedOutput {
  private readonly queue: { stream: Stream; text: string }[] = [];
  private waiting = false;
  private idle: (() => void)[] = [];

  write(stream: Stream, text: string): void {
    this.queue.push({ stream, text });
    this.pump();
  }

  /** Resolves once everything written has left the process. */
  flushed(): Promise<void> {
    return new Promise((resolve) => {
      this.idle.push(resolve);
      this.pump();
    });
  }

  private pump(): void {
    while (!this.waiting) {
      const next = this.queue[0];
      const held = next ? [next.stream === process.stdout ? process.stderr : process.stdout] : [process.stdout, process.stderr];
      const busy = held.find((stream) => stream.writableLength > 0);
      if (busy) {
        this.waiting = true;
        busy.write('', () => {
          this.waiting = false;
          this.pump();
        });
        return;
      }
      if (!next) {
        for (const resolve of this.idle.splice(0)) resolve();
        return;
      }
      this.queue.shift();
      next.stream.write(next.text);
    }
  }
}

export class LogPrinter {
  /** Whether any line of the run was printed. */
  printedLines = false;
  private readonly gaps: OutputGaps;
  private readonly output = new OrderedOutput();

  /** `maxLines`: the lines a run's log keeps (the client's logMaxLines). */
  constructor(maxLines: number) {
    this.gaps = new OutputGaps(maxLines);
  }

  /** Prints one entry, in the order read. */
  readonly print = (entry: LogEntry): void => {
    for (const note of this.gaps.notesBefore(entry)) this.output.write(process.stderr, `${note}\n`);
    if (entry.kind === 'restaged') this.output.write(process.stderr, `${restagedNote(entry.reason)}\n`);
    if (entry.kind !== 'line') return;
    this.printedLines = true;
    this.output.write(entry.stream === 'stderr' ? process.stderr : process.stdout, `${entry.line}\n`);
  };

  /** Resolves once every line printed has left the process: what fitq says after the output then comes after it. */
  flushed(): Promise<void> {
    return this.output.flushed();
  }
}
