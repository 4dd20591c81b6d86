/**
 * A Prometheus histogram whose bucket counts are read, not observed: the
 * run statistics Redis keeps (includes/runTimeBounds.lua) per scrape. prom-client's
 * Histogram only counts what it observes in this process, so this gives its
 * registry the same values it would (`_bucket` with `le`, `_sum`, `_count`).
 */
import type { Metric, Registry } from 'prom-client';
import type { RunTimeBuckets } from '../model/metrics-snapshot.js';

type Labels = Record<string, string>;

interface Value {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

export class SnapshotHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly values: Value[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    // The registry formats anything with prom-client's get(); its types only name its own classes.
    registry.registerMetric(this as unknown as Metric);
  }

  /** Adds one labelled series from non-cumulative bucket counts in ms (shown in seconds, cumulative). */
  set(labels: Labels, buckets: RunTimeBuckets): void {
    let cumulative = 0;
    buckets.boundsMs.forEach((boundMs, i) => {
      cumulative += buckets.counts[i] ?? 0;
      this.values.push({ labels: { ...labels, le: boundMs / 1000 }, value: cumulative, metricName: `${this.name}_bucket` });
    });
    cumulative += buckets.counts[buckets.boundsMs.length] ?? 0;
    this.values.push({ labels: { ...labels, le: '+Inf' }, value: cumulative, metricName: `${this.name}_bucket` });
    this.values.push({ labels, value: buckets.sumMs / 1000, metricName: `${this.name}_sum` });
    this.values.push({ labels, value: cumulative, metricName: `${this.name}_count` });
  }

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Value[] }> {
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.values });
  }
}
