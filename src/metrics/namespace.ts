/**
 * The dashboard's `/metrics`: every namespace it shows, each read from Redis
 * in one script call (readMetrics-*.lua) so a scrape's numbers describe one
 * moment, as Prometheus text. A fresh registry per scrape: the values are
 * Redis's, not this process's.
 */
import { Gauge, Registry } from 'prom-client';
import type { FitqClient } from '../client.js';
import { Scripts } from '../queue/scripts.js';
import { capacityMetrics } from './capacity-metrics.js';
import { runMetrics } from './run-metrics.js';

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
export async function renderNamespaceMetrics(clients: ReadonlyMap<string, FitqClient>): Promise<{ contentType: string; body: string }> {
  const registry = new Registry();
  const up = new Gauge({ name: 'fitq_up', help: '1 when the namespace could be read from Redis for this scrape.', labelNames: ['queue'], registers: [registry] });
  const runs = runMetrics(registry);
  const capacity = capacityMetrics(registry);
  const reads = await Promise.allSettled([...clients].map(async ([queue, client]) => ({ queue, snapshot: await scriptsFor(client).readMetrics() })));
  [...clients.keys()].forEach((queue, i) => {
    const read = reads[i]!;
    up.set({ queue }, read.status === 'fulfilled' ? 1 : 0);
    if (read.status !== 'fulfilled') return;
    runs.add(queue, read.value.snapshot);
    capacity.add(queue, read.value.snapshot);
  });
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/** The same as a fetch Response (hono: `app.get('/metrics', () => namespaceMetricsResponse(context.clients))`). */
export async function namespaceMetricsResponse(clients: ReadonlyMap<string, FitqClient>): Promise<Response> {
  const { contentType, body } = await renderNamespaceMetrics(clients);
  return new Response(body, { status: 200, headers: { 'content-type': contentType } });
}
