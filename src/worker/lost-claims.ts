/**
 * Claims of this worker's runs that Redis no longer holds. Replication is
 * asynchronous: a claim the old master acknowledged may never have reached
 * the replica that took over, which holds the run as staged again and what
 * it reserved as free. The heartbeat finds such runs; each is taken back
 * atomically as it was claimed (reclaimRun) while nothing happened to it,
 * so its process runs on; else the run moved on without it (another worker
 * claimed it, it ended, was held, or what it reserved went to other runs)
 * and this copy is stopped, saying exactly why, here and in the run's
 * history. A claim removed by hand (no failover) is stopped likewise.
 */
import type { Logger } from 'pino';
import { describeAclRefusal } from '../redis/refusals.js';
import type { ReclaimResult } from '../queue/claim-reply.js';
import type { Scripts } from '../queue/scripts.js';
import type { ActiveRun } from './active-run.js';
import type { Executor } from './executor.js';

/** Why a run whose claim is gone from Redis (not lost in a failover: removed) is stopped. */
export const NOT_HELD = 'Redis no longer holds it for its worker (its claim was lost or removed)';

export interface LostClaimParts {
  name: string;
  scripts: Scripts;
  logger: Logger;
}

/** What became of a lost claim's run, for the worker's log and the stop's reason; undefined: it was claimed back or is held. */
export function describeLoss(result: ReclaimResult): string | undefined {
  if (result.code !== 'lost') return undefined;
  switch (result.why) {
    case 'gone':
      return NOT_HELD;
    case 'moved':
      if (result.status === 'running' && result.other) return `its claim was lost in a Redis failover and worker ${result.other} claimed it again meanwhile (the run goes on there)`;
      if (result.status === 'running') return NOT_HELD;
      if (result.status === 'staged') return 'its claim was lost in a Redis failover and the run was claimed and put back meanwhile';
      return `its claim was lost in a Redis failover and the run ended ${result.status} meanwhile`;
    case 'parked':
      return 'its claim was lost in a Redis failover and the run was held, delayed or set to wait for other runs meanwhile';
    case 'noRoom':
      return `its claim was lost in a Redis failover and ${result.other} it had reserved went to other runs meanwhile (the run starts again when it fits)`;
  }
}

export class LostClaims {
  /** Runs whose reclaim is on its way: one at a time per run. */
  private readonly asking = new Set<string>();

  constructor(private readonly parts: LostClaimParts) {}

  /** Takes back or stops every run of `executor` that `held` (a heartbeat's) lacks; settles once each is decided. */
  async settle(executor: Executor, token: string, held: readonly { runId: string; epoch: string }[]): Promise<void> {
    await Promise.all(executor.unheld(held).map((run) => this.settleRun(executor, token, run)));
  }

  private async settleRun(executor: Executor, token: string, run: ActiveRun): Promise<void> {
    const { name, scripts, logger } = this.parts;
    if (this.asking.has(run.runId)) return;
    this.asking.add(run.runId);
    try {
      const result = await scripts.reclaimRun(name, token, run);
      if (result.code === 'reclaimed') {
        logger.warn(
          { runId: run.runId },
          `Run ${run.runId}: Redis lost its claim in a failover (the new master never received it); claimed it back as it was, the run goes on`,
        );
        return;
      }
      const loss = describeLoss(result);
      if (loss === undefined) return;
      if (loss === NOT_HELD) {
        logger.warn({ runId: run.runId }, `Run ${run.runId} is no longer held for this worker in Redis (its claim was lost or removed); stopping it`);
      } else {
        logger.warn({ runId: run.runId }, `Run ${run.runId}: ${loss}; stopping this copy`);
      }
      executor.giveUp(run.runId, loss);
    } catch (error) {
      const refusal = describeAclRefusal(error as Error, 'taking back a lost claim');
      if (refusal) {
        // Never asked again with success: the copy goes, as the claim cannot be taken back.
        logger.warn({ runId: run.runId }, `Run ${run.runId} is no longer held for this worker in Redis and ${refusal}; stopping it`);
        executor.giveUp(run.runId, NOT_HELD);
        return;
      }
      // Asked again at the next heartbeat.
      logger.warn({ runId: run.runId, err: error }, `Run ${run.runId}: could not take back its lost claim yet: ${(error as Error).message}`);
    } finally {
      this.asking.delete(run.runId);
    }
  }
}
