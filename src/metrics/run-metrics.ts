/**
 * The runs of a namespace as Prometheus metrics: how many are in each status
 * and staged per demand shape now (gauges), and the run statistics Redis
 * keeps as they start and end (counters and histograms, includes/runTimeBounds.lua).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { MetricsSnapshot } from '../model/metrics-snapshot.js';
import { ENDED_STATUSES, RUN_STATUSES } from '../model/run-record.js';
import { shapeSeries } from './shape-series.js';
import { SnapshotHistogram } from './snapshot-histogram.js';

export interface RunMetrics {
  add(queue: string, snapshot: MetricsSnapshot): void;
}

/** `shapes`: the demand shapes with a `fitq_staged_runs` series of their own (shape-series.ts). */
export function runMetrics(registry: Registry, shapes: number): RunMetrics {
  const registers = [registry];
  const runs = new Gauge({
    name: 'fitq_runs',
    help: 'Runs stored in each status now (held: fitq hold; staged includes runs waiting for dependencies or a begin time).',
    labelNames: ['queue', 'status'],
    registers,
  });
  const staged = new Gauge({
    name: 'fitq_staged_runs',
    help: 'Staged runs in the fit index, per demand shape (amounts in base units: bytes, cores, devices); the shapes with the most runs each, the rest summed as shape="other".',
    labelNames: ['queue', 'shape'],
    registers,
  });
  const paused = new Gauge({ name: 'fitq_queue_paused', help: '1 while the namespace is paused (fitq pause).', labelNames: ['queue'], registers });
  const finished = new Counter({
    name: 'fitq_runs_finished_total',
    help: 'Runs that ended, by status (completed, failed, canceled, lost, rejected, timeout).',
    labelNames: ['queue', 'status'],
    registers,
  });
  const restaged = new Counter({
    name: 'fitq_runs_restaged_total',
    help: 'Runs fitq staged again: cause worker (their worker died or was stopped under them), retry (retry on failure), preempted (stopped to make room for a higher-priority run).',
    labelNames: ['queue', 'cause'],
    registers,
  });
  const wait = new SnapshotHistogram('fitq_run_wait_seconds', 'Time from staging to a run\'s first start.', registry);
  const duration = new SnapshotHistogram('fitq_run_duration_seconds', 'Time from start to end of runs that ended after starting, by status.', registry);
  return {
    add(queue, snapshot) {
      for (const status of RUN_STATUSES) runs.set({ queue, status }, snapshot.runs.get(status) ?? 0);
      for (const [shape, count] of shapeSeries(snapshot.shapes, snapshot.stagedTotal, shapes)) staged.set({ queue, shape }, count);
      paused.set({ queue }, snapshot.paused ? 1 : 0);
      for (const status of ENDED) finished.inc({ queue, status }, snapshot.ended.get(status) ?? 0);
      for (const cause of RESTAGE_CAUSES) restaged.inc({ queue, cause }, snapshot.restaged.get(cause) ?? 0);
      wait.set({ queue }, snapshot.wait);
      for (const [status, buckets] of snapshot.durations) {
        if (ENDED.includes(status)) duration.set({ queue, status }, buckets);
      }
    },
  };
}

const ENDED: readonly string[] = ENDED_STATUSES;
const RESTAGE_CAUSES = ['worker', 'retry', 'preempted'] as const;
