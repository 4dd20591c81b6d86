/**
 * A worker's phase, one at a time, and the named moves between them:
 *
 *   running ──fenced──▶ reregistering ──reregistered──▶ running
 *   running | reregistering ──stop──▶ stopping ──released──▶ stopped
 *
 * `reregistering` ends back in `running` whether or not the new registration
 * succeeded (a failed one is tried again at the next fencing). A stop has a
 * mode that only escalates, graceful then now; the first stop `now` starts
 * the deadline after which the stop sequence no longer waits for Redis.
 * `stopped` begins once the worker lets go of its lease (no more heartbeats).
 */
import type { StopMode } from '../queue/worker-calls.js';

export type WorkerState = 'running' | 'reregistering' | 'stopping' | 'stopped';

/** How long a stopping worker waits for Redis before it gives up recording. */
export const GIVE_UP_AFTER_GRACE_MS = 5_000;

export class Lifecycle {
  /** Resolves when a forced stop stops waiting for Redis. */
  readonly givenUp: Promise<void>;
  private giveUp!: () => void;
  private giveUpTimer: NodeJS.Timeout | undefined;
  private current: WorkerState = 'running';
  private mode: StopMode | undefined;
  private shutdown: Promise<void> | undefined;
  /** Interrupts (Ctrl-C, SIGTERM) received so far. */
  private interrupts = 0;

  /** `giveUpAfterMs`: from the first stop `now` until the stop sequence gives up on Redis. */
  constructor(private readonly giveUpAfterMs: number) {
    this.givenUp = new Promise((resolve) => (this.giveUp = resolve));
  }

  get state(): WorkerState {
    return this.current;
  }

  get stopMode(): StopMode | undefined {
    return this.mode;
  }

  /** Once a stop began, nothing new is claimed, reconciled or registered. */
  get stopping(): boolean {
    return this.current === 'stopping' || this.current === 'stopped';
  }

  /** The lease was let go: late calls failing is expected, not worth a warning. */
  get stopped(): boolean {
    return this.current === 'stopped';
  }

  fenced(): void {
    if (this.current === 'running') this.current = 'reregistering';
  }

  /** A stop during the re-registration wins: it stays stopping. */
  reregistered(): void {
    if (this.current === 'reregistering') this.current = 'running';
  }

  /**
   * Moves to stopping and runs `release` (once: later stops get the same
   * promise); a stop `now` after a graceful one escalates the mode.
   */
  stop(mode: StopMode, release: () => Promise<void>): Promise<void> {
    // Once stopped there is nothing left to give up on, and the timer would keep the process alive.
    if (mode === 'now' && this.mode !== 'now' && !this.stopped) this.giveUpTimer = setTimeout(this.giveUp, this.giveUpAfterMs);
    this.mode = mode === 'now' ? 'now' : (this.mode ?? 'graceful');
    if (!this.shutdown) {
      this.current = 'stopping';
      this.shutdown = release();
    }
    return this.shutdown;
  }

  released(): void {
    this.current = 'stopped';
    if (this.giveUpTimer) clearTimeout(this.giveUpTimer);
  }

  /** Counts an interrupt; returns how many came so far. */
  interrupted(): number {
    this.interrupts += 1;
    return this.interrupts;
  }
}
