/**
 * Brings fitq's index in line with what BullMQ's API (or Bull Board) did to
 * the queue (see FitqClient.reconcile), one reconcile at a time, and says
 * what it did. Called at start and with every poll.
 */
import type { Logger } from 'pino';
import type { Scripts } from '../queue/scripts.js';
import type { ReconcileAction } from '../queue/run-calls.js';
import type { Lifecycle } from './lifecycle.js';

/** Most reconcile calls in one go (each does a bounded amount of work, RECONCILE_BUDGET jobs): the next poll goes on. */
const RECONCILE_MAX_CALLS = 500;

export class Reconciler {
  /** Whether a reconcile is under way: a poll during it does not start another. */
  private busy = false;

  constructor(
    private readonly scripts: Scripts,
    private readonly logger: Logger,
    private readonly lifecycle: Lifecycle,
  ) {}

  async reconcile(): Promise<void> {
    if (this.busy || this.lifecycle.stopping) return;
    this.busy = true;
    try {
      for (let calls = 0; calls < RECONCILE_MAX_CALLS && !this.lifecycle.stopping; calls++) {
        const { more, actions } = await this.scripts.reconcileRuns();
        this.report(actions);
        if (!more) break;
      }
    } catch (error) {
      if (!this.lifecycle.stopped) this.logger.warn({ err: error }, `Reconciling with BullMQ's actions failed: ${(error as Error).message}`);
    } finally {
      this.busy = false;
    }
  }

  private report(actions: readonly ReconcileAction[]): void {
    let forgotten = 0;
    for (const { kind, runId, detail } of actions) {
      const log = this.logger.child({ runId });
      if (kind === 'retried') log.info(`Run ${runId} was retried from BullMQ (it was ${detail}): staged again`);
      else if (kind === 'rejected') log.warn(`Job ${runId} is not a fitq run (added without fitq's run data): rejected`);
      else if (kind === 'priority') log.info(`Run ${runId}: its priority was changed from BullMQ: now ${detail}`);
      else if (kind === 'priorityKept') log.warn(`Run ${runId}: its priority was changed from BullMQ, but it is signed: kept at ${detail}`);
      else if (kind === 'promoted') log.info(`Run ${runId} was promoted from BullMQ: it begins now`);
      else if (kind === 'dataKept') {
        const what = detail === 'staged' ? 'as fitq staged it (fitq update changes a staged run)' : `as fitq ${detail === 'running' ? 'runs' : 'ran'} it`;
        log.warn(`Run ${runId}: its job data was changed from BullMQ (job.updateData): put back ${what}`);
      }
      else if (kind === 'forgotten') {
        forgotten += 1;
        log.debug(`Run ${runId} was deleted from BullMQ: forgotten`);
      }
    }
    if (forgotten > 0) this.logger.info(`Forgot ${forgotten} run(s) deleted from BullMQ`);
  }
}
