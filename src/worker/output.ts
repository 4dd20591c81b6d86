/**
 * Buffers a run's output lines and writes them to its log stream in batches,
 * so a chatty run costs a few round trips per second, not one per line.
 */
import type { LogLine } from '../queue/logs.js';
import type { Scripts } from '../queue/scripts.js';

const FLUSH_DELAY_MS = 50;
const FLUSH_LINES = 500;

export class OutputBuffer {
  private pending: LogLine[] = [];
  private dropped = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The write under way, if any: one at a time, so memory stays bounded while Redis is slow or away. */
  private writing: Promise<void> | undefined;

  constructor(
    private readonly scripts: Scripts,
    private readonly runId: string,
    /** Who produced the output: stored only while the run is still theirs. */
    private readonly worker: string,
    private readonly epoch: string,
    private readonly maxLines: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  add(line: LogLine): void {
    this.pending.push(line);
    if (this.pending.length > this.maxLines) {
      // Only the newest lines are kept anyway.
      this.dropped += this.pending.length - this.maxLines;
      this.pending.splice(0, this.pending.length - this.maxLines);
    }
    if (this.pending.length >= FLUSH_LINES) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
  }

  /** Writes what is pending; resolves when everything added so far is stored (or failed to be). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writing) await this.writing;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    if (this.dropped > 0) {
      batch.unshift({ stream: 'stderr', line: `[fitq: ${this.dropped} lines dropped while Redis was slow]` });
      this.dropped = 0;
    }
    this.writing = this.scripts
      .appendLog(this.runId, this.worker, this.epoch, batch)
      .then(() => undefined, this.onError)
      .finally(() => (this.writing = undefined));
    await this.writing;
  }
}
