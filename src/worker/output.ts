/**
 * Buffers a run's output lines and writes them to its log stream in batches,
 * so a chatty run costs a few round trips per second, not one per line.
 */
import type { Redis } from 'ioredis';
import type { NamespaceKeys } from '../queue/keys.js';
import { appendLogLines, type LogLine } from '../queue/logs.js';

const FLUSH_DELAY_MS = 50;
const FLUSH_LINES = 500;

export class OutputBuffer {
  private pending: LogLine[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: Redis,
    private readonly keys: NamespaceKeys,
    private readonly runId: string,
    private readonly maxLines: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  add(line: LogLine): void {
    this.pending.push(line);
    // Keep memory bounded even if Redis is away: only the newest lines matter.
    if (this.pending.length > this.maxLines) this.pending.splice(0, this.pending.length - this.maxLines);
    if (this.pending.length >= FLUSH_LINES) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
  }

  /** Writes what is pending; resolves when everything added so far is stored. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.flushing
      .then(() => appendLogLines(this.redis, this.keys, this.runId, batch, this.maxLines))
      .catch(this.onError);
    return this.flushing;
  }
}
