/**
 * The claim loop: claims runs while this worker has room and hands each to
 * the executor. Wake-ups coalesce: one loop at a time, and a wake-up during
 * it makes it look once more. It knows when a claim is on its way, so runs
 * Redis holds for this worker that it never heard of can be told apart from
 * a claim whose reply is still coming.
 */
import type { Logger } from 'pino';
import { describeAclRefusal } from '../redis/refusals.js';
import type { Scripts } from '../queue/scripts.js';
import type { ClaimResult } from '../queue/claim-reply.js';
import { ClaimNotes } from './claim-notes.js';
import { unreadClaim } from '../model/claimed-run.js';
import { formatDemands } from '../model/run-data.js';
import type { Resources } from '../resources/spec.js';
import { arrayOfLimit } from '../resources/array-limit.js';
import type { IgnoredRuns } from './ignored-runs.js';
import type { Lease } from './lease.js';
import type { Lifecycle } from './lifecycle.js';
import type { ResolvedWorkerOptions } from './options.js';
import type { ClaimObserver } from '../metrics/worker-metrics.js';

/** How long a worker short of its own means (see shortage.ts) claims nothing, at first and at most (doubling while it stays short). */
export const SHORTAGE_BACKOFF_FIRST_MS = 1_000;
export const SHORTAGE_BACKOFF_MAX_MS = 30_000;

/** Why a run claimed for a worker that never heard of the claim is given back. */
const CLAIM_REPLY_LOST = "its worker never received the claim's reply (Redis connection lost)";

export interface ClaimParts {
  options: ResolvedWorkerOptions;
  scripts: Scripts;
  logger: Logger;
  lease: Lease;
  lifecycle: Lifecycle;
  ignoredRuns: IgnoredRuns;
  /** Stops the worker for good with this one-line reason. */
  fail: (failure: string) => void;
  /** A run-once worker found nothing more to run and runs nothing: it stops. */
  finished: () => void;
  /** Hears each claim's outcome and time (--metrics-port). */
  observer?: ClaimObserver | undefined;
  /** Whether Redis may evict keys (see eviction-guard.ts): nothing is claimed meanwhile. */
  evicting: () => boolean;
}

export class ClaimLoop {
  private readonly notes: ClaimNotes;
  private loop: Promise<void> | undefined;
  /** A wake-up came while the loop ran: it looks once more. */
  private again = false;
  /** Whether a claim call is on its way (its run is not the executor's yet). */
  private inFlight = false;
  private lastClaim: ClaimResult['code'] | undefined;
  /** Wakes the loop when the next run that begins later is due (see claimRun's nextBegin). */
  private beginTimer: NodeJS.Timeout | undefined;
  /** While set, the worker is short of its own means (a run could not start): it claims nothing. */
  private backoffTimer: NodeJS.Timeout | undefined;
  private backoffMs = 0;
  /** When the last back-off ended (performance.now()): another shortage soon after doubles the next. */
  private backoffEndedAt = -Infinity;
  /** Until then (performance.now()), after a shortage, runs are claimed one at a time, each once the last has started. */
  private oneAtATimeUntil = -Infinity;

  constructor(private readonly parts: ClaimParts) {
    this.notes = new ClaimNotes(parts.logger);
  }

  /** The loop under way, if any: a stopping worker lets a claim in flight land first. */
  get current(): Promise<void> | undefined {
    return this.loop;
  }

  /** Claims runs while there is room; coalesces concurrent wake-ups. */
  wake(): void {
    if (this.parts.lifecycle.stopping) return;
    if (this.loop) {
      this.again = true;
      return;
    }
    this.loop = this.claimWhileRoom()
      .catch((error: unknown) => {
        // A command Redis refuses this worker's user would refuse every claim the same way.
        const refusal = describeAclRefusal(error as Error, 'a command claiming runs needs');
        if (refusal) this.parts.fail(refusal);
        else this.parts.logger.warn({ err: error }, `Claim failed: ${(error as Error).message}`);
      })
      .finally(() => {
        this.loop = undefined;
        // A wake-up after the loop's last look, before it settled (another reply read in the same turn), looks again.
        if (this.again && !this.parts.lifecycle.stopping) this.wake();
        else this.finishRunOnceWhenDone();
      });
  }

  /** Holds moved elsewhere (an older run held, or the held run started): claim again, perhaps to backfill. */
  holdsMoved(): void {
    if (this.notes.holding !== undefined) this.wake();
  }

  /**
   * Runs Redis holds for this worker that it is not running: a claim whose
   * reply never came back (the connection dropped as Redis answered), or one
   * whose recorded end a failover lost (recorded again). With no claim on
   * its way, any other such run never started here: it is given back
   * (re-staged per its retries, else lost). Settles once the ends recorded
   * again are.
   */
  async giveBackUnknown(token: string, held: readonly { runId: string; epoch: string }[]): Promise<void> {
    const { lease, logger } = this.parts;
    if (token !== lease.token) return;
    const unknown: { runId: string; epoch: string }[] = [];
    const recordedAgain: Promise<void>[] = [];
    for (const { runId, epoch } of held) {
      if (lease.executor.has(runId)) continue;
      // It ran here and ended, but a failover lost the end: recorded again, not given back. (No claim on its way
      // can be it, so this waits for none: what the end frees may be what a claim the failover lost needs back.)
      const again = lease.executor.recordEndAgain(runId, epoch);
      if (again) recordedAgain.push(again);
      else unknown.push({ runId, epoch });
    }
    // A claim on its way may be one of the others: look again at the next heartbeat.
    if (!this.inFlight) {
      for (const { runId, epoch } of unknown) {
        logger.warn({ runId }, `Run ${runId} was claimed for this worker but the claim's reply never arrived (Redis connection lost); giving it back`);
        lease.executor.giveBack(unreadClaim(runId, epoch), CLAIM_REPLY_LOST);
      }
    }
    await Promise.all(recordedAgain);
  }

  private hasRoom(): boolean {
    const { concurrency } = this.parts.options;
    if (this.backoffTimer !== undefined || this.parts.evicting()) return false;
    // What a burst of claims would need at once may be what the worker lacks: one at a time finds how many fit.
    if (performance.now() < this.oneAtATimeUntil && this.parts.lease.executor.starting > 0) return false;
    return concurrency === 0 || this.parts.lease.executor.size < concurrency;
  }

  /** A run has started: the next may be claimed, if claims go one at a time. */
  started(): void {
    if (performance.now() < this.oneAtATimeUntil) this.wake();
  }

  /**
   * A run could not start because this worker is short of its own means
   * (out of file descriptors): it was put back, and the worker claims
   * nothing for a while (runs still running may end and free what it
   * lacks), longer each time it is short again soon after; then, for
   * SHORTAGE_BACKOFF_MAX_MS, one run at a time. Said once per back-off.
   */
  backOff(reason: string): void {
    if (this.backoffTimer !== undefined || this.parts.lifecycle.stopping) return;
    const again = performance.now() - this.backoffEndedAt < 2 * this.backoffMs;
    this.backoffMs = again ? Math.min(this.backoffMs * 2, SHORTAGE_BACKOFF_MAX_MS) : SHORTAGE_BACKOFF_FIRST_MS;
    const running = this.parts.lease.executor.running;
    this.parts.logger.warn(
      `Claiming nothing for ${this.backoffMs / 1000}s: ${reason.replace(/^its worker \S+ /, 'this worker ')} (${running} run${running === 1 ? '' : 's'} running)`,
    );
    this.backoffTimer = setTimeout(() => {
      this.backoffTimer = undefined;
      this.backoffEndedAt = performance.now();
      this.oneAtATimeUntil = this.backoffEndedAt + SHORTAGE_BACKOFF_MAX_MS;
      this.wake();
    }, this.backoffMs);
    this.backoffTimer.unref();
  }

  private async claimWhileRoom(): Promise<void> {
    const { lease, lifecycle } = this.parts;
    do {
      this.again = false;
      while (!lifecycle.stopping && this.hasRoom()) {
        const token = lease.token;
        const result = await this.claimAndDispatch(token);
        if (result.code === 'claimed' || result.code === 'indexing') continue;
        if (result.code === 'fenced') {
          // Registered anew: claim again at once, runs may have been staged meanwhile.
          await lease.onFenced(token);
          this.again = true;
        } else if (result.code !== 'full' && result.code !== 'paused' && result.code !== 'drained') {
          this.wakeAtNextBegin(result.nextBeginMs);
          this.notes.noteHolding(result.code === 'waiting' ? result.holding : undefined);
          await this.parts.ignoredRuns.report(result.ignored);
        }
        break;
      }
    } while (this.again && !lifecycle.stopping);
    // A wake-up no claim answered (no room) is not a wake-up latency.
    this.parts.observer?.settled();
  }

  /** One claim; a claimed run goes to the executor before anyone may ask whether this worker runs it. */
  private async claimAndDispatch(token: string): Promise<ClaimResult> {
    const { options, scripts, logger, lease, observer } = this.parts;
    this.inFlight = true;
    const startedAt = observer ? performance.now() : 0;
    try {
      const { concurrency, policy, gpuPlacement, timeLimits, bareConcurrency } = options;
      const result = await scripts.claimRun(options.name, token, concurrency, policy, gpuPlacement, timeLimits, bareConcurrency).catch(
        (error: unknown) => {
          observer?.claimed('error', startedAt);
          throw error;
        },
      );
      observer?.claimed(result.code, startedAt);
      this.lastClaim = result.code;
      if (result.code !== 'fenced') {
        this.notes.notePaused(result.code === 'paused');
        this.noteDrained(result.code === 'drained');
      }
      if (result.code === 'claimed') {
        logger.info(
          { runId: result.runId, epoch: Number(result.epoch), requires: result.claim.fields.resources ?? '' },
          `Scheduling run ${result.runId} (requires ${describeDemands(result.claim.demands)})`,
        );
        lease.executor.dispatch(result.claim);
      }
      // Its runs the claim preempted for the run it holds: signalled and stopped here.
      if (result.code === 'waiting') for (const { runId, forRun } of result.preempting) lease.executor.preempt(runId, forRun);
      return result;
    } finally {
      this.inFlight = false;
    }
  }

  /** Says when the worker becomes drained or no longer is; the lease remembers it for a re-registration. */
  noteDrained(drained: boolean): void {
    const { lease, logger, options } = this.parts;
    if (drained === lease.drained) return;
    lease.drained = drained;
    if (drained) {
      // It holds nothing any more (the drain took its hold off).
      this.notes.noteHolding(undefined);
      logger.info(`Drained: claiming no more runs, ${lease.executor.size} still running (fitq undrain ${options.name})`);
    } else {
      logger.info('Undrained: claiming runs again');
      this.wake();
    }
  }

  /**
   * Claims again when the next delayed run is due (a run staged with
   * --begin or --delay, or waiting out a retry's backoff): the claim moves it
   * into the index then. One timer, for the soonest; the poll still runs.
   */
  private wakeAtNextBegin(ms: number | undefined): void {
    clearTimeout(this.beginTimer);
    this.beginTimer = undefined;
    if (ms === undefined || this.parts.lifecycle.stopping) return;
    // (At least 50 ms: a due job BullMQ left there, no fitq run, is not promoted by a claim.)
    this.beginTimer = setTimeout(() => {
      this.beginTimer = undefined;
      this.wake();
    }, Math.min(Math.max(ms + 5, 50), 2 ** 31 - 1));
    this.beginTimer.unref();
  }

  /** Stops the begin-time and back-off timers (the worker stops). */
  close(): void {
    clearTimeout(this.beginTimer);
    this.beginTimer = undefined;
    clearTimeout(this.backoffTimer);
    this.backoffTimer = undefined;
  }

  private finishRunOnceWhenDone(): void {
    const { options, lifecycle, lease } = this.parts;
    if (options.runOnce && !lifecycle.stopping && !this.loop && lease.executor.size === 0 && this.lastClaim === 'idle') {
      this.parts.finished();
    }
  }
}

/** "gpu=1 mem=8G" for logs, in human units, or "no resources"; an array's limit as the array's slot ("; a slot of array ID"). */
function describeDemands(demands: Resources): string {
  const arrays = [...demands.keys()].flatMap((name) => arrayOfLimit(name) ?? []);
  return [formatDemands(demands) || 'no resources', ...arrays.map((array) => `a slot of array ${array}`)].join('; ');
}
