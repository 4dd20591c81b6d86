/**
 * What the claims last said about the queue, logged only when it changes:
 * whether the queue is paused, and which blocked head this worker holds
 * resources for (a worker holding one claims again when holds move).
 */
import type { Logger } from 'pino';

export class ClaimNotes {
  private paused = false;
  private held: string | undefined;

  constructor(private readonly logger: Logger) {}

  /** The blocked head this worker holds resources for, if any. */
  get holding(): string | undefined {
    return this.held;
  }

  /** Logs when the claims find the queue paused, and when no longer. */
  notePaused(paused: boolean): void {
    if (paused === this.paused) return;
    this.paused = paused;
    this.logger.info(paused ? 'The queue is paused (fitq pause): starting no run until fitq resume' : 'The queue was resumed');
  }

  /** Logs (at debug level) when this worker starts holding resources for a blocked head. */
  noteHolding(runId: string | undefined): void {
    if (runId && runId !== this.held) {
      this.logger.debug({ runId }, `Holding resources for run ${runId} (next in line; later runs may not take them)`);
    }
    this.held = runId;
  }
}
