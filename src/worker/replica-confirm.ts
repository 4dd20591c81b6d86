/**
 * A worker's writes confirmed by replicas (`--redis-wait-replicas`, see
 * redis/replica-wait.ts). A claim is confirmed before its run's process
 * starts: WAIT again and again while fewer replicas confirm it (said once),
 * so a run never starts on a claim a failover could lose, unless it is
 * stopped meanwhile. An end is confirmed once recorded; a shortfall is only
 * said, as the worker keeps the end and records it again if a failover
 * loses it (recent-ends.ts).
 */
import type { Logger } from 'pino';
import { describeShortfall, waitForReplicas, type ReplicaWait } from '../redis/replica-wait.js';
import type { RedisConnection } from '../redis/connection.js';
import type { ActiveRun } from './active-run.js';

export class ReplicaConfirm {
  constructor(
    private readonly redis: RedisConnection,
    /** A key of the namespace: on a cluster, WAIT goes to the node serving it. */
    private readonly key: string,
    readonly wait: ReplicaWait,
  ) {}

  /** Resolves once the replicas asked for confirmed the run's claim, or the run is being stopped. */
  async confirmClaim(run: ActiveRun, log: Logger): Promise<void> {
    let said = false;
    while (run.stop === undefined) {
      const confirmed = await this.confirmed(log);
      if (confirmed >= this.wait.replicas) {
        if (said) log.info(`Run ${run.runId}: its claim confirmed by ${confirmed} replica${confirmed === 1 ? '' : 's'}; starting it`);
        return;
      }
      if (!said) log.warn(`Run ${run.runId} waits to start: ${describeShortfall(confirmed, this.wait, 'its claim')} (--redis-wait-replicas); asking again`);
      said = true;
    }
  }

  /** Confirms a recorded end; a shortfall is said. */
  async confirmEnd(runId: string, log: Logger): Promise<void> {
    const confirmed = await this.confirmed(log);
    if (confirmed < this.wait.replicas) {
      log.warn(`Run ${runId}: only ${describeShortfall(confirmed, this.wait, 'its end')}; it is recorded again if a failover loses it`);
    }
  }

  /** How many replicas confirmed this connection's writes; 0 when WAIT failed (Redis down: asked again). */
  private async confirmed(log: Logger): Promise<number> {
    try {
      return await waitForReplicas(this.redis, this.key, this.wait);
    } catch (error) {
      log.warn({ err: error }, `Could not ask Redis how many replicas have this worker's writes: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(this.wait.timeoutMs, 1_000)));
      return 0;
    }
  }
}
