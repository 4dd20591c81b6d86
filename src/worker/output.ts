/**
 * Buffers a run's output lines and writes them to its log stream in batches,
 * so a chatty run costs a few round trips per second, not one per line.
 *
 * Memory stays bounded however much a run prints: batches are bounded, one
 * write per run is under way at a time, and output waiting to be written is
 * counted across all runs of this process, so the run processes' output is
 * read no faster than Redis takes it (see waitForOutputRoom). Beyond that,
 * a run keeps at most its last `maxLines` lines and MAX_PENDING_CHARS
 * characters waiting; older ones are dropped. Lines are numbered (the
 * stream keeps each one's number), and the line after lines dropped while
 * Redis was slow, or refused by it, carries how many: readers say exactly
 * what is missing where (model/logs.ts, OutputGaps). Lines dropped because
 * `maxLines` newer ones wait need no count: the log would not keep them.
 */
import type { LogLine, LogPosition } from '../model/logs.js';
import type { Scripts } from '../queue/scripts.js';
import { retryRefused } from './retry.js';

const FLUSH_DELAY_MS = 50;
/** A batch (one appendLog call) holds at most this many lines and characters. */
const FLUSH_LINES = 500;
const FLUSH_CHARS = 512 * 1024;
/** Characters of one run waiting to be written, at most. */
const MAX_PENDING_CHARS = 8 * 1024 * 1024;
/**
 * Above this many characters waiting in this process, reading the runs'
 * output pauses until it is down to OUTPUT_LOW_WATER.
 */
const OUTPUT_HIGH_WATER = 4 * 1024 * 1024;
const OUTPUT_LOW_WATER = 1024 * 1024;
/** Longest pause of a run's output in one go. */
const MAX_PAUSE_MS = 2000;

/** Characters added to any OutputBuffer of this process and not yet written (or dropped). */
let backlog = 0;
let roomWaiters: (() => void)[] = [];

function changeBacklog(delta: number): void {
  backlog += delta;
  if (delta < 0 && backlog <= OUTPUT_LOW_WATER && roomWaiters.length > 0) {
    const waiters = roomWaiters;
    roomWaiters = [];
    waiters.forEach((resolve) => resolve());
  }
}

/**
 * Undefined while there is room for more output; otherwise a promise that
 * resolves once the output waiting to be written is down to a quarter of the
 * limit, or after MAX_PAUSE_MS at most (so runs go on, at a crawl, even if
 * Redis takes nothing for long; a run then keeps only its newest lines).
 * Readers of run output pause meanwhile.
 */
export function waitForOutputRoom(): Promise<void> | undefined {
  if (backlog <= OUTPUT_HIGH_WATER) return undefined;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      roomWaiters = roomWaiters.filter((waiter) => waiter !== done);
      resolve();
    }, MAX_PAUSE_MS);
    timer.unref();
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    roomWaiters.push(done);
  });
}

export class OutputBuffer {
  /** Lines waiting, from `head` on: a queue that drops from the front in O(1). */
  private lines: (LogLine | undefined)[] = [];
  private head = 0;
  private pendingChars = 0;
  /** The number of the oldest line waiting (1: the run's first line). */
  private headNumber = 1;
  /** Lines dropped while Redis was slow, and refused by Redis, since the last batch written: told with the next one. */
  private slow = 0;
  private refused = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The write loop, while it runs: one write at a time. */
  private draining: Promise<void> | undefined;

  constructor(
    private readonly scripts: Scripts,
    private readonly runId: string,
    /** Who produced the output (worker, registration token, claim epoch): stored only while the run is still theirs. */
    private readonly worker: string,
    private readonly token: string,
    private readonly epoch: string,
    private readonly maxLines: number,
    /** Told of a write Redis refused: `retrying` unless it was the last try. */
    private readonly onError: (error: unknown, retrying: boolean) => void,
    /** Whether to stop retrying refused writes (the worker let go of its lease). */
    private readonly givenUp: () => boolean = () => false,
  ) {}

  private get count(): number {
    return this.lines.length - this.head;
  }

  add(line: LogLine): void {
    this.lines.push(line);
    this.pendingChars += line.line.length;
    changeBacklog(line.line.length);
    // Only the newest lines are kept anyway: past maxLines they would be trimmed; past MAX_PENDING_CHARS Redis is too slow.
    while (this.count > Math.max(this.maxLines, 1) || (this.pendingChars > MAX_PENDING_CHARS && this.count > 1)) {
      const capped = this.count > Math.max(this.maxLines, 1);
      this.take();
      if (!capped) this.slow += 1;
    }
    if (this.count >= FLUSH_LINES || this.pendingChars >= FLUSH_CHARS) this.startDrain();
    else this.timer ??= setTimeout(() => this.startDrain(), FLUSH_DELAY_MS);
  }

  /** Writes what is pending; resolves when everything added so far is stored (or failed to be). */
  async flush(): Promise<void> {
    for (;;) {
      if (this.count > 0) this.startDrain();
      if (!this.draining) return;
      await this.draining;
    }
  }

  /** Removes the oldest pending line (dropped, or taken into a batch, which still counts in the backlog). */
  private take(countsAsWritten = true): LogLine {
    const line = this.lines[this.head]!;
    this.lines[this.head] = undefined;
    this.head += 1;
    this.headNumber += 1;
    this.pendingChars -= line.line.length;
    if (countsAsWritten) changeBacklog(-line.line.length);
    if (this.count === 0) {
      this.lines = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.lines.length) {
      this.lines = this.lines.slice(this.head);
      this.head = 0;
    }
    return line;
  }

  private startDrain(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.draining || this.count === 0) return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      // Lines added just as the loop ended.
      if (this.count > 0) this.startDrain();
    });
  }

  /** Writes batches until nothing is pending. */
  private async drain(): Promise<void> {
    while (this.count > 0) {
      const batch: LogLine[] = [];
      const position: LogPosition = { first: this.headNumber, slow: this.slow, refused: this.refused };
      this.slow = 0;
      this.refused = 0;
      let chars = 0;
      while (this.count > 0 && batch.length < FLUSH_LINES) {
        const next = this.lines[this.head]!.line.length;
        if (batch.length > 0 && chars + next > FLUSH_CHARS) break;
        batch.push(this.take(false));
        chars += next;
      }
      try {
        // A batch Redis refuses for now is tried again (said once), newer lines waiting behind it.
        await retryRefused(() => this.scripts.appendLog(this.runId, this.worker, this.token, this.epoch, batch, position), {
          givenUp: this.givenUp,
          onRetry: (error, attempt) => {
            if (attempt === 1) this.onError(error, true);
          },
        });
      } catch (error) {
        this.onError(error, false);
        // Lost with it: told with the next batch, as are the drops it carried.
        this.slow += position.slow;
        this.refused += position.refused + batch.length;
      } finally {
        changeBacklog(-chars);
      }
    }
  }
}
