/**
 * What a run used, as `sacct` shows it: its worker reads the run's
 * processes from /proc every second (no cgroup here) and records CPU time,
 * peak memory and wall time with the run, while it runs and when it ends;
 * each attempt keeps its own; `fitq runs show` puts them beside what was
 * booked. Real workers, real processes, a real redis-server.
 */
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/model/run-record.js';
import { connectClient, fitq, newQueue, startTestWorker } from '../support/fitq.js';
import { memoryHog } from '../support/memory-hog.js';
import { waitFor } from '../support/wait.js';

describe('what a run used, sampled from /proc', () => {
  it('is recorded with the run: CPU time, peak memory and wall time, beside what it booked', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await startTestWorker(queue, { resources: 'cpu=2 mem=1G' });
    const id = (await client.stage({ command: memoryHog(120, 2500), resources: 'cpu=1 mem=500M' })).runs[0]!.id;
    const run = await client.waitForEnd(id);
    expect(run.status).toBe('completed');
    const usage = run.usage!;
    expect(usage).toMatchObject({ source: 'sampled' });
    expect(usage.samples).toBeGreaterThanOrEqual(1);
    // Its 120 MB, written to, are resident: a reading sees them (and node's own).
    expect(usage.peakMemoryBytes).toBeGreaterThan(120e6);
    expect(usage.cpuUserMs + usage.cpuSystemMs).toBeGreaterThan(0);
    expect(usage.wallMs).toBeGreaterThanOrEqual(2500);
    expect(usage.wallMs).toBeLessThanOrEqual(run.endedAt! - run.startedAt! + 1000);
    const shown = await fitq(['runs', 'show', id], { queue });
    expect(shown.stdout).toMatch(/^memory: +1\d\d\.\dM peak; mem=500M booked$/m);
    expect(shown.stdout).toMatch(/^cpu time: +.+ \(user .+, system .+\), \d\.\d\d CPUs on average; cpu=1 booked$/m);
    expect(shown.stdout).toMatch(/^measured: +from \/proc every 1s/m);
    // Its attempt keeps it too.
    expect(shown.stdout).toMatch(/#1 completed .*, cpu .+, 1\d\d\.\dM peak$/m);
    const json = JSON.parse((await fitq(['runs', 'show', id, '--json'], { queue })).stdout) as RunRecord;
    expect(json.usage).toEqual(usage);
  });

  it('is recorded while the run runs, so far, at each heartbeat', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await startTestWorker(queue, { leaseMs: 1500 });
    const id = (await client.stage({ command: memoryHog(80, 100, 60_000) })).runs[0]!.id;
    const running = await waitFor('its usage so far', async () => {
      const run = await client.getRun(id);
      return run.status === 'running' && (run.usage?.samples ?? 0) > 0 ? run : undefined;
    });
    expect(running.usage!.peakMemoryBytes).toBeGreaterThan(80e6);
    const shown = await fitq(['runs', 'show', id], { queue });
    expect(shown.stdout).toMatch(/^measured: +from \/proc every 1s .*, so far \(.+ of wall time\)$/m);
    await client.cancelRun(id);
    expect((await client.waitForEnd(id)).status).toBe('canceled');
  });

  it('of each attempt is kept with that attempt when the run is retried', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await startTestWorker(queue);
    const script = `${memoryHog(60, 1500)[2]} process.exitCode = require('fs').existsSync(process.argv[1]) ? 0 : (require('fs').writeFileSync(process.argv[1], ''), 3);`;
    const marker = `/tmp/fitq-usage-retry-${queue}`;
    const id = (await client.stage({ command: ['node', '-e', script, marker], retry: { max: 1 } })).runs[0]!.id;
    // (Its attempts are read by getRun, not by the wait.)
    await client.waitForEnd(id);
    const run = await client.getRun(id);
    expect(run.status).toBe('completed');
    expect(run.attempts).toHaveLength(1);
    expect(run.attempts![0]).toMatchObject({ status: 'failed', usage: { source: 'sampled' } });
    expect(run.attempts![0]!.usage!.peakMemoryBytes).toBeGreaterThan(60e6);
    expect(run.usage!.peakMemoryBytes).toBeGreaterThan(60e6);
  });

  it('says when a run ended before its first reading, rather than zero', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await startTestWorker(queue);
    const id = (await client.stage({ command: ['true'] })).runs[0]!.id;
    const run = await client.waitForEnd(id);
    expect(run.usage).toMatchObject({ source: 'sampled', samples: 0 });
    const shown = await fitq(['runs', 'show', id], { queue });
    expect(shown.stdout).toMatch(/^memory: +not read: it ended before the first reading \(every 1s\)$/m);
    // Its attempt says nothing of what was not read.
    expect(shown.stdout).toMatch(/^ {2}#1 completed \(exit code 0\), on \S+, started \S+, ran \S+$/m);
  });
});
