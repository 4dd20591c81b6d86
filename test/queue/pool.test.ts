/**
 * Cluster-wide pools: shared capacity that no number of workers can overdraw.
 */
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { parseDecimal } from '../../src/resources/amount.js';
import { BIN, connectClient, FIXTURES, fitq, newQueue, redisUrl, startTestWorker } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

describe('pools', () => {
  it('is never overdrawn by many workers, and is all returned at the end', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.setPool('license=2');
    for (let i = 0; i < 6; i++) await startTestWorker(queue, { name: `p${i}`, resources: 'cpu=1' });
    const { runs } = await client.stage({ command: [`${FIXTURES}stamp.sh`, '0.15'], resources: 'license=1 cpu=1', repeat: 24 });
    let peakUsed = 0n;
    await waitFor('every run to end', async () => {
      const used = parseDecimal((await client.redis.hget(client.keys.poolUsed, 'license')) ?? '0');
      expect(used).toBeLessThanOrEqual(2_000_000n);
      if (used > peakUsed) peakUsed = used;
      return (await client.listRuns({ statuses: ['completed'] })).length === runs.length;
    }, 60_000, 10);
    // Sweep over the runs' own start/end stamps: at most two at any instant.
    const events: [number, number][] = [];
    for (const run of runs) {
      const lines = (await client.readLog(run.id)).flatMap((e) => (e.kind === 'line' ? [e.line] : []));
      const at = (word: string) => Number(lines.find((line) => line.startsWith(`${word} `))?.split(' ')[1]);
      events.push([at('start'), 1], [at('end'), -1]);
    }
    events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let current = 0;
    let peak = 0;
    for (const [, delta] of events) peak = Math.max(peak, (current += delta));
    expect(peak).toBeLessThanOrEqual(2);
    expect(peak).toBe(2); // it really contended
    expect(peakUsed).toBe(2_000_000n);
    expect(new Set((await client.listRuns()).map((run) => run.worker)).size).toBeGreaterThan(1);
    expect(await client.listPool()).toEqual([{ name: 'license', capacity: 2_000_000n, used: 0n }]);
  });

  it('lets a blocked head keep its pool share: later runs on other workers do not take it', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.setPool('license=1');
    const stamp = (seconds: number, resources: string) =>
      client.stage({ command: [`${FIXTURES}stamp.sh`, String(seconds)], resources }).then(({ runs }) => runs[0]!.id);
    await startTestWorker(queue, { name: 'cpubox', resources: 'cpu=1' });
    await startTestWorker(queue, { name: 'gpubox', resources: 'gpu=1' });
    const first = await stamp(1, 'license=1 cpu=1');
    await waitFor('the first run to hold the licence', async () => (await client.getRun(first)).status === 'running');
    const head = await stamp(0.2, 'license=1 gpu=1');
    await waitFor('gpubox to hold the head', async () => (await client.redis.hget(client.keys.holds, head)) === 'gpubox');
    const later = await Promise.all([0, 1, 2].map(() => stamp(0.1, 'license=1 cpu=1')));
    const spans = new Map<string, [number, number]>();
    for (const id of [first, head, ...later]) {
      expect((await client.waitForEnd(id)).status).toBe('completed');
      const lines = (await client.readLog(id)).flatMap((e) => (e.kind === 'line' ? [e.line] : []));
      const at = (word: string) => Number(lines.find((line) => line.startsWith(`${word} `))?.split(' ')[1]);
      spans.set(id, [at('start'), at('end')]);
    }
    // cpubox was free for the later runs as soon as the first ended, but the licence went to the head.
    expect(spans.get(head)![0]).toBeGreaterThanOrEqual(spans.get(first)![1]);
    for (const id of later) expect(spans.get(id)![0]).toBeGreaterThanOrEqual(spans.get(head)![1]);
  });

  it('says the pool is exhausted, and returns a dead worker’s share', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.setPool('license=1');
    const holder = (await client.stage({ command: ['sleep', '60'], resources: 'license=1' })).runs[0]!.id;
    const worker = execa('node', [BIN, 'worker', '--name', 'mortal', '--lease', '1', '--log-format', 'json'], {
      env: { FITQ_REDIS_URL: redisUrl(), FITQ_QUEUE: queue, FITQ_PREFIX: process.env.FITQ_PREFIX ?? '' },
      reject: false,
    });
    await waitFor('the run to hold the licence', async () => (await client.getRun(holder)).status === 'running');
    const waiting = (await client.stage({ command: ['true'], resources: 'license=1' })).runs[0]!.id;
    expect((await client.getRun(waiting)).reason).toBe('pool license exhausted (license=1 > 0 free)');
    worker.kill('SIGKILL');
    await worker;
    // Read at once, its run is lost; waiting for its end reaps the dead worker as its lease runs out (reads never reap).
    await waitFor('the run to read as lost', async () => (await client.getRun(holder)).status === 'lost', 10_000, 100);
    expect((await client.waitForEnd(holder, 10_000)).status).toBe('lost');
    expect((await client.listPool())[0]).toMatchObject({ name: 'license', used: 0n });
    await startTestWorker(queue, { name: 'heir' });
    expect((await client.waitForEnd(waiting)).status).toBe('completed');
  });

  it('fitq pool set / ls / rm, with clear errors', async () => {
    const queue = newQueue();
    expect((await fitq(['pool', 'set', 'license=4', 'db-conn=0.5'], { queue })).stdout).toMatch(/^db-conn\s+0.5\s+0\s+0.5$/m);
    const listed = JSON.parse((await fitq(['pool', 'ls', '--json'], { queue })).stdout) as unknown[];
    expect(listed).toEqual([
      { name: 'db-conn', capacity: 0.5, used: 0 },
      { name: 'license', capacity: 4, used: 0 },
    ]);
    const bad = await fitq(['pool', 'set', 'license'], { queue });
    expect(bad).toMatchObject({ exitCode: 2 });
    expect(bad.stderr.trim()).toBe("Error: invalid resource spec 'license': expected NAME=VALUE");
    const unknown = await fitq(['pool', 'rm', 'nope'], { queue });
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr.trim()).toBe("Error: no pool resource named 'nope'");
    expect((await fitq(['pool', 'rm', 'license', 'db-conn'], { queue })).exitCode).toBe(0);
    expect((await fitq(['pool', 'ls'], { queue })).stdout.trim()).toBe('The pool is empty.');
  });
});
