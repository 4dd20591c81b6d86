/**
 * `fitq_staged_runs` stays a bounded number of series however many demand
 * shapes are staged: the shapes with the most staged runs get one each, the
 * rest are summed as `shape="other"`, and the sum over the series is every
 * staged run. The read behind it (readMetrics-*.lua) counts the runs of a
 * bounded number of shapes. Against real Redis, and the real dashboard for
 * its --metrics-shapes flag.
 */
import { describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import { renderNamespaceMetrics } from '../../src/metrics/namespace.js';
import { OTHER_SHAPES } from '../../src/metrics/shape-series.js';
import { Scripts } from '../../src/queue/scripts.js';
import { startDashboard } from '../support/browser.js';
import { connectClient, fitq, newQueue, redisUrl, stagedShape } from '../support/fitq.js';
import { parseExposition, samplesOf, valueOf, type Sample } from '../support/prometheus.js';
import { startRedisServer } from '../support/redis-server.js';

/** Stages `runs` runs of each `resources`, in this order. */
async function stageShapes(client: FitqClient, shapes: [resources: string, runs: number][]): Promise<void> {
  const requests = shapes.map(([resources, repeat]) => ({ command: ['true'], resources, repeat }));
  for (let i = 0; i < requests.length; i += 500) await client.stage(requests.slice(i, i + 500));
}

async function scrape(queue: string, client: FitqClient, shapes?: number): Promise<Sample[]> {
  const { body } = await renderNamespaceMetrics(new Map([[queue, client]]), shapes === undefined ? {} : { shapes });
  return parseExposition(body);
}

/** The `fitq_staged_runs` series of a scrape: shape label -> value, in the scrape's order. */
function stagedSeries(samples: readonly Sample[], queue: string): [string, number][] {
  return samplesOf(samples, 'fitq_staged_runs', { queue }).map((sample) => [sample.labels.shape!, sample.value]);
}

const sum = (series: readonly [string, number][]) => series.reduce((total, [, value]) => total + value, 0);

/** cpu=1 has 5 runs, cpu=2 4, cpu=3 3, cpu=4 2, cpu=5 and lic=1 (a group of its own) 1: 16 runs. */
const SIX_SHAPES: [string, number][] = [['cpu=3', 3], ['cpu=5', 1], ['cpu=1', 5], ['lic=1', 1], ['cpu=2', 4], ['cpu=4', 2]];

describe('fitq_staged_runs, bounded', () => {
  it('shows the N shapes with the most staged runs and sums the rest as other; the series add up to every staged run', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await stageShapes(client, SIX_SHAPES);

    const capped = await scrape(queue, client, 2);
    expect(valueOf(capped, 'fitq_runs', { queue, status: 'staged' })).toBe(16);
    expect(stagedSeries(capped, queue)).toEqual([['cpu=1', 5], ['cpu=2', 4], [OTHER_SHAPES, 3 + 2 + 1 + 1]]);

    // The default (50) shows every one of six shapes, and no other.
    const all = stagedSeries(await scrape(queue, client), queue);
    expect(all).toEqual([['cpu=1', 5], ['cpu=2', 4], ['cpu=3', 3], ['cpu=4', 2], ['cpu=5', 1], ['lic=1', 1]]);

    // 0: one series, every staged run.
    expect(stagedSeries(await scrape(queue, client, 0), queue)).toEqual([[OTHER_SHAPES, 16]]);

    // Runs of one shape leave: the ranking follows.
    const cpu1 = (await client.listRuns({ statuses: ['staged'] })).filter((run) => JSON.stringify(run.resources) === '{"cpu":1}').map((run) => run.id);
    await client.removeRuns(cpu1.slice(0, 4));
    expect(stagedSeries(await scrape(queue, client, 2), queue)).toEqual([['cpu=2', 4], ['cpu=3', 3], [OTHER_SHAPES, 2 + 1 + 1 + 1]]);
  });

  it("sums one demand shape's runs over the users that staged them: one series, not one per user", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await stageShapes(client, [['cpu=1', 2], ['cpu=2', 1]]);
    const bob = await connectClient(queue, redisUrl(), { user: 'bob' });
    await stageShapes(bob, [['cpu=1', 3]]);
    expect(stagedSeries(await scrape(queue, client), queue)).toEqual([['cpu=1', 5], ['cpu=2', 1]]);
  });

  it('reads the runs of at most the shapes asked for, each group its share of its first shapes, and every staged run in the total', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await stageShapes(client, SIX_SHAPES);
    const scripts = new Scripts(client.redis, client.keys, client.logMaxLines);

    const three = await scripts.readMetrics(3);
    // The lic group's one shape, and the cpu group's first two in the staged order.
    expect(three.shapes).toEqual(new Map([[stagedShape('lic=1'), 1], [stagedShape('cpu=3'), 3], [stagedShape('cpu=5'), 1]]));
    expect(three.stagedTotal).toBe(16);

    const every = await scripts.readMetrics(1000);
    expect(every.shapes.size).toBe(6);
    expect(every.stagedTotal).toBe(16);
  });

  it('with more shapes than a scrape reads: N + 1 series, and still every staged run', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    // 1,200 shapes of one run each, then one of three runs staged after them all.
    const many: [string, number][] = Array.from({ length: 1200 }, (_, i) => [`cpu=0.${String(i + 1).padStart(4, '0')}`, 1]);
    await stageShapes(client, [...many, ['cpu=7', 3]]);

    const series = stagedSeries(await scrape(queue, client, 50), queue);
    expect(series).toHaveLength(51);
    expect(series.slice(0, 50).every(([, value]) => value === 1)).toBe(true);
    expect(series[50]).toEqual([OTHER_SHAPES, 1203 - 50]);
    expect(sum(series)).toBe(1203);
  });

  it('with more groups than shapes to read (each run its own resource names): looks at a few groups only, and every staged run is in the total', async () => {
    // A server of its own: the test counts the commands the read runs (INFO commandstats).
    const server = await startRedisServer();
    const queue = newQueue();
    const client = await FitqClient.connect({ redisUrl: server.url, queue });
    try {
      // 300 groups of one shape each: g1=1, g2=1, …, 2 runs each.
      await stageShapes(client, Array.from({ length: 300 }, (_, i): [string, number] => [`g${i + 1}=1`, 2]));
      const scripts = new Scripts(client.redis, client.keys, client.logMaxLines);
      await client.redis.config('RESETSTAT');
      const ten = await scripts.readMetrics(10);
      const stats = await client.redis.info('commandstats');
      const zcards = Number(/^cmdstat_zcard:calls=(\d+)/m.exec(stats)?.[1] ?? 0);
      // A count of each group read, and of each shape shown: not one of every group.
      expect(zcards).toBeLessThan(100);
      expect(ten.shapes.size).toBeLessThanOrEqual(10);
      expect([...ten.shapes.values()].every((runs) => runs === 2)).toBe(true);
      expect(ten.stagedTotal).toBe(600);
      const every = await scripts.readMetrics(1000);
      expect(every.shapes.size).toBe(300);
      expect(every.stagedTotal).toBe(600);
    } finally {
      await client.close();
      await server.dispose();
    }
  });

  it('fitq dashboard --metrics-shapes sets N at /metrics; a value that is no count is refused', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await stageShapes(client, SIX_SHAPES);
    const dashboard = await startDashboard(queue, ['--metrics-shapes', '1']);
    const response = await fetch(`${dashboard.origin}/metrics`);
    expect(response.status).toBe(200);
    expect(stagedSeries(parseExposition(await response.text()), queue)).toEqual([['cpu=1', 5], [OTHER_SHAPES, 11]]);
    await dashboard.stop();

    for (const bad of ['lots', '-1', '10001', '1.5']) {
      const refused = await fitq(['dashboard', '--port', '0', '--metrics-shapes', bad], { queue, process: false });
      expect(refused.exitCode, bad).toBe(2);
      expect(refused.stderr.trim()).toBe(`Error: expected --metrics-shapes to be a number of shapes from 0 to 10000, got '${bad}'`);
    }
  });
});
