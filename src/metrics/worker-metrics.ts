/**
 * What only a worker knows, as Prometheus metrics on its own registry
 * (`fitq worker --metrics-port`): how long its claims take, by outcome, and
 * how long it takes from hearing that a run may fit to the claim that
 * answers it. One histogram observation per claim: the claim loop's cost
 * stays what it was.
 */
import { performance } from 'node:perf_hooks';
import { Histogram, Registry } from 'prom-client';
import type { ClaimResult } from '../queue/claim-reply.js';

/** What the claim loop reports (src/worker/claims.ts); undefined when metrics are off. */
export interface ClaimObserver {
  /** A namespace event said a run may fit now (staged, pool changed or freed, resumed, undrained). */
  woken(): void;
  /** A claim started at `startedAt` (performance.now()) ended with this outcome. */
  claimed(outcome: ClaimResult['code'] | 'error', startedAt: number): void;
  /** The claim loop stopped looking without claiming for the last wake-up (no room): it is not measured. */
  settled(): void;
}

/** Claims take a millisecond or so; a slow Redis or a big index, tens. */
const CLAIM_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const WAKE_UP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export class WorkerMetrics implements ClaimObserver {
  readonly registry = new Registry();
  private readonly claimDuration: Histogram<'outcome'>;
  private readonly wakeUpLatency: Histogram<'outcome'>;
  /** When the first wake-up not answered yet by a claim arrived (performance.now()). */
  private wokenAt: number | undefined;

  constructor(labels: { queue: string; worker: string }) {
    this.registry.setDefaultLabels(labels);
    const registers = [this.registry];
    this.claimDuration = new Histogram({
      name: 'fitq_worker_claim_duration_seconds',
      help: 'Round trip of each claim (one Lua script call), by outcome: claimed, waiting, idle, full, paused, drained, fenced, error.',
      labelNames: ['outcome'],
      buckets: CLAIM_BUCKETS,
      registers,
    });
    this.wakeUpLatency = new Histogram({
      name: 'fitq_worker_wakeup_latency_seconds',
      help: 'From a namespace event saying a run may fit (staged, pool, resumed) reaching the worker to the reply of the first claim made after it, by that claim\'s outcome.',
      labelNames: ['outcome'],
      buckets: WAKE_UP_BUCKETS,
      registers,
    });
  }

  woken(): void {
    this.wokenAt ??= performance.now();
  }

  claimed(outcome: ClaimResult['code'] | 'error', startedAt: number): void {
    const now = performance.now();
    this.claimDuration.observe({ outcome }, (now - startedAt) / 1000);
    // A claim already on its way when the event came does not answer it.
    if (this.wokenAt === undefined || this.wokenAt > startedAt) return;
    this.wakeUpLatency.observe({ outcome }, (now - this.wokenAt) / 1000);
    this.wokenAt = undefined;
  }

  settled(): void {
    this.wokenAt = undefined;
  }
}
