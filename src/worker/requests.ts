/**
 * Requests other fitq commands address to this worker (fitq cancel, fitq
 * stop). They are acted on only as Redis records them: a cancellation in
 * the run's job (`cancelRequested`, written by the cancelRun script and
 * cleared when the run is claimed again) while the run is this worker's
 * current claim, a stop in this worker's record (`stopRequested`, written by
 * requestStop). Events on the namespace's channel only say when to look, so
 * a forged PUBLISH changes nothing; the heartbeat reply carries the same
 * records, for events that were missed. A stop request may come both ways:
 * it is acted on once per mode. With --require-signed, a cancel of a
 * signed run is acted on only once its recorded request is proven
 * (request-check.ts).
 */
import type { RedisConnection } from '../redis/connection.js';
import type { Logger } from 'pino';
import type { NamespaceKeys } from '../queue/keys.js';
import type { StopMode } from '../queue/worker-calls.js';
import type { Preempting } from '../queue/claim-reply.js';
import type { Lease } from './lease.js';
import type { RequestCheck } from './request-check.js';

export class Requests {
  /** The strongest stop requested so far. */
  private stopRequested: StopMode | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly lease: Lease,
    private readonly stop: (options: { now: boolean; why: string | undefined }) => Promise<void>,
    /** Where the requests are recorded: this worker's name and connection. */
    private readonly records: { redis: RedisConnection; keys: NamespaceKeys; worker: string },
    /** With --require-signed: a cancel of a run is acted on only once proven (request-check.ts). */
    private readonly check?: RequestCheck,
  ) {}

  /** Runs whose cancel is being proven: each is looked at once at a time. */
  private readonly proving = new Set<string>();

  /** A cancellation the heartbeat script found recorded for this worker's run. */
  cancel(runId: string): void {
    if (this.check === undefined) {
      if (this.lease.executor.cancel(runId)) this.logger.info({ runId }, `Canceling run ${runId}`);
      return;
    }
    if (this.proving.has(runId) || !this.lease.executor.has(runId)) return;
    this.proving.add(runId);
    void this.cancelIfProven(runId, this.check).finally(() => this.proving.delete(runId));
  }

  private async cancelIfProven(runId: string, check: RequestCheck): Promise<void> {
    try {
      const refused = await check.cancelRefusal(runId, this.lease.executor.userOf(runId));
      if (refused === undefined) {
        if (this.lease.executor.cancel(runId)) this.logger.info({ runId }, `Canceling run ${runId}`);
      } else {
        this.logger.warn({ runId }, `Refused to cancel run ${runId}: ${refused}`);
      }
    } catch (error) {
      // The heartbeat carries the cancellation again.
      this.logger.debug({ runId, err: error }, `Could not prove the cancel of run ${runId}`);
    }
  }

  /** Runs a claim preempted (its reply, or the heartbeat's): each is signalled and stopped once (Executor.preempt). */
  preempt(preempting: readonly Preempting[]): void {
    for (const { runId, forRun } of preempting) this.lease.executor.preempt(runId, forRun);
  }

  /**
   * A `cancel` event: cancels the run if its job records a cancellation
   * requested while it is this worker's running run under the claim it runs.
   */
  async cancelOnEvent(runId: string): Promise<void> {
    const epoch = this.lease.executor.epochOf(runId);
    if (epoch === undefined) return;
    const { redis, keys, worker } = this.records;
    try {
      const [status, owner, runEpoch, requested] = await redis.hmget(keys.run(runId), 'status', 'worker', 'epoch', 'cancelRequested');
      // Still the same claim: a later claim's epoch, or none, is not this run's any more.
      if (status !== 'running' || owner !== worker || runEpoch !== epoch || requested !== '1') {
        this.logger.debug({ runId }, `Ignored a cancel event for run ${runId}: no cancellation is recorded for it`);
        return;
      }
      if (this.lease.executor.epochOf(runId) === epoch) this.cancel(runId);
    } catch (error) {
      // The heartbeat carries the cancellation if there is one.
      this.logger.debug({ runId, err: error }, `Could not check a cancel event for run ${runId}`);
    }
  }

  /** A `stop` event: stops as this worker's record says a stop was requested, if it says so. */
  async stopOnEvent(): Promise<void> {
    const { redis, keys, worker } = this.records;
    try {
      const mode = await redis.hget(keys.worker(worker).info, 'stopRequested');
      if (mode === 'graceful' || mode === 'now') this.stopOnRequest(mode === 'now');
      else this.logger.debug('Ignored a stop event: no stop is recorded for this worker');
    } catch (error) {
      // The heartbeat carries the stop if there is one.
      this.logger.debug({ err: error }, 'Could not check a stop event');
    }
  }

  /** `fitq stop`, from any machine, as recorded: once per mode (a later "now" still terminates the runs). */
  stopOnRequest(now: boolean): void {
    if (now ? this.stopRequested === 'now' : this.stopRequested !== undefined) return;
    this.stopRequested = now ? 'now' : 'graceful';
    this.logger.info(`Stop requested through Redis${now ? ': terminating runs' : ': letting runs finish'}`);
    void this.stop({ now, why: now ? 'fitq stop --now' : undefined });
  }
}
