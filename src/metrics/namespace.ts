/**
 * The dashboard's `/metrics`: every namespace it shows, each read from Redis
 * in one script call (readMetrics-*.lua) so a scrape's numbers describe one
 * moment, but for the runs of waiting-children and failed, counted by
 * status a part at a time (status-counts.ts); as Prometheus text. A fresh
 * registry per scrape: the values are Redis's, not this process's.
 */
import { Gauge, Registry } from 'prom-client';
import type { FitqClient } from '../client.js';
import { Scripts } from '../queue/scripts.js';
import { capacityMetrics } from './capacity-metrics.js';
import { runUsageMetrics } from './run-usage-metrics.js';
import { runMetrics } from './run-metrics.js';
import { addParkedAndEndedCounts } from './status-counts.js';
import { DEFAULT_METRICS_SHAPES, shapesToRead } from './shape-series.js';

export interface NamespaceMetricsOptions {
  /** Demand shapes with a `fitq_staged_runs` series of their own, the others summed as `shape="other"` (default DEFAULT_METRICS_SHAPES). */
  shapes?: number | undefined;
}

const scriptsOf = new WeakMap<FitqClient, Scripts>();

function scriptsFor(client: FitqClient): Scripts {
  let scripts = scriptsOf.get(client);
  if (!scripts) scriptsOf.set(client, (scripts = new Scripts(client.redis, client.keys, client.logMaxLines)));
  return scripts;
}

/**
 * Prometheus text for the namespaces (name -> client). A namespace whose
 * read fails (Redis unreachable) shows `fitq_up{queue} 0` and nothing else,
 * and the others are still shown.
 */
export async function renderNamespaceMetrics(
  clients: ReadonlyMap<string, FitqClient>,
  options: NamespaceMetricsOptions = {},
): Promise<{ contentType: string; body: string }> {
  const shapes = options.shapes ?? DEFAULT_METRICS_SHAPES;
  const registry = new Registry();
  const up = new Gauge({ name: 'fitq_up', help: '1 when the namespace could be read from Redis for this scrape.', labelNames: ['queue'], registers: [registry] });
  const runs = runMetrics(registry, shapes);
  const capacity = capacityMetrics(registry);
  const usage = runUsageMetrics(registry);
  const snapshotOf = async (client: FitqClient) => {
    const scripts = scriptsFor(client);
    const snapshot = await scripts.readMetrics(shapesToRead(shapes));
    await addParkedAndEndedCounts(scripts, snapshot.runs);
    return snapshot;
  };
  const reads = await Promise.allSettled([...clients].map(async ([queue, client]) => ({ queue, snapshot: await snapshotOf(client) })));
  [...clients.keys()].forEach((queue, i) => {
    const read = reads[i]!;
    up.set({ queue }, read.status === 'fulfilled' ? 1 : 0);
    if (read.status !== 'fulfilled') return;
    runs.add(queue, read.value.snapshot);
    capacity.add(queue, read.value.snapshot);
    usage.add(queue, read.value.snapshot);
  });
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/** The same as a fetch Response (hono: `app.get('/metrics', () => namespaceMetricsResponse(context.clients))`). */
export async function namespaceMetricsResponse(clients: ReadonlyMap<string, FitqClient>, options: NamespaceMetricsOptions = {}): Promise<Response> {
  const { contentType, body } = await renderNamespaceMetrics(clients, options);
  return new Response(body, { status: 200, headers: { 'content-type': contentType } });
}
