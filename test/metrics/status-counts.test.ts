/**
 * /metrics counts the runs whose queue state does not tell their status
 * (held and parked runs in waiting-children; canceled, failed and the other
 * ended runs in failed) a part at a time: every part's count is exact, the
 * parts add up to every run, and no Redis call grows with those runs (one
 * read them all: 173 ms for 10,000 canceled runs). Against real Redis.
 */
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { renderNamespaceMetrics } from '../../src/metrics/namespace.js';
import { addParkedAndEndedCounts } from '../../src/metrics/status-counts.js';
import { Scripts } from '../../src/queue/scripts.js';
import { commandsDuring } from '../support/claim-cost.js';
import { connectClient, newQueue } from '../support/fitq.js';
import { parseExposition, valueOf } from '../support/prometheus.js';
import { startRedisServer } from '../support/redis-server.js';

/** `canceled` runs canceled, `held` runs held and one run waiting for a staged run (parked): all with no worker. */
async function namespaceWith(client: FitqClient, canceled: number, held: number): Promise<void> {
  const runs = (await client.stage({ command: ['true'], resources: 'cpu=1', repeat: canceled + held + 1 })).runs.map((run) => run.id);
  await client.cancelRuns(runs.slice(0, canceled));
  await client.holdRuns(runs.slice(canceled, canceled + held));
  await client.stage({ command: ['true'], after: [{ kind: 'ok', ids: [runs.at(-1)!] }] });
}

describe('/metrics run counts of waiting-children and failed', () => {
  it('are exact a part at a time, whatever the part, a member written by hand counted as its state says', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await namespaceWith(client, 5, 3);
    await client.redis.zadd(client.keys.queue.key('failed'), 0, 'no run:id');
    const scripts = new Scripts(client.redis, client.keys, 100);
    const expected = new Map([['canceled', 5], ['failed', 1], ['held', 3], ['staged', 1]]);
    for (const part of [1, 2, 3, 1000]) {
      const counts = new Map<string, number>();
      await addParkedAndEndedCounts(scripts, counts, part);
      expect(new Map([...counts].sort()), `part of ${part}`).toEqual(expected);
    }
    const samples = parseExposition((await renderNamespaceMetrics(new Map([[queue, client]]))).body);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'canceled' })).toBe(5);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'held' })).toBe(3);
    // One staged in the index, one parked waiting for it.
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'staged' })).toBe(2);
  });

  it('cost readMetrics nothing more with 300 canceled and held runs than with 3, and a part reads at most its runs', async () => {
    const server = await startRedisServer();
    try {
      const readCost = async (runs: number) => {
        const client = await connectClient(newQueue(), server.url);
        await namespaceWith(client, runs, runs);
        const scripts = new Scripts(client.redis, client.keys, 100);
        const calls = await commandsDuring(client.redis, () => scripts.readMetrics(50));
        // A part of 50: its ZRANGE, then one read of each run.
        expect(await commandsDuring(client.redis, () => scripts.countRunStatuses('ended', 0, 50))).toBe(1 + Math.min(50, runs));
        await client.close();
        return calls;
      };
      const few = await readCost(3);
      expect(few).toBeGreaterThan(5);
      expect(await readCost(300)).toBe(few);
    } finally {
      await server.dispose();
    }
  });
});
