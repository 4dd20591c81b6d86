/**
 * The ends this worker recorded lately, by run and claim epoch. Redis
 * replication is asynchronous: a failover to a replica that had not yet
 * received an end loses it, and Redis then holds the run as still running
 * here. The worker records that end again from here, rather than giving the
 * run back as one it never started (which would record a run that exited 0
 * as lost). Bounded: the newest MAX_KEPT, each for KEPT_MS.
 */
import type { FinishInput } from '../queue/worker-calls.js';

const MAX_KEPT = 1000;
/** Longer than any failover fitq waits for (FAILOVER_WAIT_MS) plus a heartbeat or two. */
const KEPT_MS = 10 * 60_000;

export class RecentEnds {
  /** In the order recorded (a Map keeps insertion order): the oldest go first. */
  private readonly ends = new Map<string, { input: FinishInput; at: number }>();

  remember(input: FinishInput): void {
    const key = `${input.runId}\n${input.epoch}`;
    this.ends.delete(key);
    this.ends.set(key, { input, at: performance.now() });
    for (const oldest of this.ends.keys()) {
      if (this.ends.size <= MAX_KEPT) break;
      this.ends.delete(oldest);
    }
  }

  /** The end recorded for this claim of the run, if it is still kept; forgotten once taken. */
  take(runId: string, epoch: string): FinishInput | undefined {
    const key = `${runId}\n${epoch}`;
    const kept = this.ends.get(key);
    this.ends.delete(key);
    return kept && performance.now() - kept.at < KEPT_MS ? kept.input : undefined;
  }
}
