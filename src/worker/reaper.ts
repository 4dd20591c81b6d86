/**
 * Reaps workers that stopped renewing their lease (their runs end lost or are
 * re-staged). Every heartbeat reaps; when a lease runs out well before the
 * next heartbeat, a timer comes back exactly then, so a dead worker's runs
 * are not held for up to a heartbeat longer than its lease.
 */
import type { Logger } from 'pino';
import { isOutOfMemory } from '../redis/refusals.js';
import type { Scripts } from '../queue/scripts.js';
import type { Lifecycle } from './lifecycle.js';

export class Reaper {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly scripts: Scripts,
    private readonly logger: Logger,
    private readonly lifecycle: Lifecycle,
    private readonly leaseMs: number,
  ) {}

  async reap(): Promise<void> {
    let reply: Awaited<ReturnType<Scripts['reapWorkers']>>;
    try {
      reply = await this.scripts.reapWorkers();
    } catch (error) {
      // Out of memory Redis refuses a reap (it writes) yet renews leases: the heartbeat did not fail.
      if (!isOutOfMemory(error)) throw error;
      this.logger.warn(`Reaping dead workers failed: ${(error as Error).message}`);
      return;
    }
    const { reaped, msUntilNext } = reply;
    for (const name of reaped) this.logger.warn(`Worker ${name} stopped renewing its lease: its runs are lost`);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // A stopped worker reaps no more (its timer was cleared when it let go of its lease).
    if (msUntilNext !== undefined && !this.lifecycle.stopped && msUntilNext + 10 < this.leaseMs / 3) {
      this.timer = setTimeout(() => void this.reap().catch(() => {}), msUntilNext + 10);
    }
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
