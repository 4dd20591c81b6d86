/**
 * The dashboard's /metrics text (renderNamespaceMetrics) against real
 * workers: runs by status and shape, worker capacity and reservations, GPU
 * devices, the pool, and the run statistics Redis keeps as runs start, end,
 * time out, are lost and re-staged; parsed as a scraper reads it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { namespaceMetricsResponse, renderNamespaceMetrics } from '../../src/metrics/namespace.js';
import type { FitqClient } from '../../src/client.js';
import type { RunRecord } from '../../src/model/run-record.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { aclRule } from '../support/acl-rules.js';
import { connectClient, newQueue, redisUrl, startTestWorker } from '../support/fitq.js';
import { parseExposition, samplesOf, typesOf, valueOf, type Sample } from '../support/prometheus.js';
import { waitFor } from '../support/wait.js';
import { a100, fakeGpuBox } from '../support/fake-gpu.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A command that runs until `open()` creates its gate file. */
function gate(): { command: string[]; open(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-metrics-'));
  dirs.push(dir);
  const file = join(dir, 'open');
  return {
    command: ['sh', '-c', 'while [ ! -e "$0" ]; do sleep 0.05; done', file],
    open: () => writeFileSync(file, ''),
  };
}

async function scrape(...clients: [string, FitqClient][]): Promise<{ text: string; samples: Sample[] }> {
  const { contentType, body } = await renderNamespaceMetrics(new Map(clients));
  expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  return { text: body, samples: parseExposition(body) };
}

async function status(client: FitqClient, runId: string, wanted: (run: RunRecord) => boolean): Promise<RunRecord> {
  return waitFor(`run ${runId} to reach the wanted status`, async () => {
    const run = await client.getRun(runId);
    return wanted(run) && run;
  }, 20_000);
}

const ended = (run: RunRecord) => !['staged', 'held', 'running'].includes(run.status);

/** No label of any sample carries one of these run ids. */
function expectNoRunIds(samples: readonly Sample[], runIds: readonly string[]): void {
  for (const sample of samples) {
    for (const value of Object.values(sample.labels)) {
      for (const runId of runIds) expect(value, `${sample.name} ${JSON.stringify(sample.labels)}`).not.toContain(runId);
    }
  }
}

describe('renderNamespaceMetrics', () => {
  it('shows what a worker\'s GPU probe read of each device, with the labels DCGM exporter gives it', async () => {
    const box = fakeGpuBox({
      gpus: [{ ...a100('GPU-6109dd5c-d378-24ee-f344-79b537574ea6'), memoryUsedMiB: 21804 }, a100('GPU-b')],
      processes: [{ gpu: 0, pid: 4242, usedMiB: 21800, name: 'python' }],
    });
    const queue = newQueue();
    const client = await connectClient(queue);
    const worker = spawnCliWorker(queue, ['--gpus', 'auto', '--gpu-probe-interval', '1s', '--name', 'probed'], undefined, box.env);
    await worker.waitForMessage(/^GPU 0 is busy/);
    const { samples } = await scrape([queue, client]);
    const device = { queue, worker: 'probed', Hostname: hostname(), gpu: '0', UUID: 'GPU-6109dd5c-d378-24ee-f344-79b537574ea6' };
    expect(valueOf(samples, 'fitq_gpu_state', { ...device, state: 'busy' })).toBe(1);
    expect(valueOf(samples, 'fitq_gpu_state', { ...device, state: 'ok' })).toBe(0);
    expect(valueOf(samples, 'fitq_gpu_memory_total_bytes', device)).toBe(40960 * 1048576);
    expect(valueOf(samples, 'fitq_gpu_memory_used_bytes', device)).toBe(21804 * 1048576);
    expect(valueOf(samples, 'fitq_gpu_memory_foreign_bytes', device)).toBe(21800 * 1048576);
    expect(valueOf(samples, 'fitq_gpu_utilization_ratio', device)).toBe(0);
    expect(valueOf(samples, 'fitq_gpu_state', { ...device, gpu: '1', UUID: 'GPU-b', state: 'ok' })).toBe(1);
  });

  it('shows what each running run used so far beside what its claim booked, and who staged it, and nothing of it once it ended', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await startTestWorker(queue, { name: 'measuring', resources: 'cpu=2 mem=1G', leaseMs: 1500 });
    // 90 MB written to, then it waits for its gate.
    const held = gate();
    const command = ['node', '-e', `const b = Buffer.alloc(90e6, 1); const f = process.argv[1]; const t = setInterval(() => require('fs').existsSync(f) && (clearInterval(t), b.length), 50);`, held.command[3]!];
    const alice = await connectClient(queue, undefined, { user: 'alice' });
    const id = (await alice.stage({ command, resources: 'cpu=0.5 mem=300M' })).runs[0]!.id;
    await waitFor('its first reading recorded', async () => ((await client.getRun(id)).usage?.samples ?? 0) > 0);
    const { samples } = await scrape([queue, client]);
    const run = { queue, worker: 'measuring', run: id, user: 'alice' };
    expect(valueOf(samples, 'fitq_run_memory_booked_bytes', run)).toBe(300e6);
    expect(valueOf(samples, 'fitq_run_cpu_booked', run)).toBe(0.5);
    expect(valueOf(samples, 'fitq_run_memory_peak_bytes', run)).toBeGreaterThan(90e6);
    expect(valueOf(samples, 'fitq_run_cpu_seconds', run)).toBeGreaterThanOrEqual(0);
    held.open();
    expect((await client.waitForEnd(id)).status).toBe('completed');
    expect(samplesOf((await scrape([queue, client])).samples, 'fitq_run_memory_peak_bytes', run)).toEqual([]);
  });

  it('shows runs by status and shape, reservations, GPU shares and the pool while runs hold resources, and counts them as they end', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.setPool('license=2');
    const gpuRun = gate();
    const cpuRun = gate();
    const [a, b, big, parked] = [
      (await client.stage({ command: gpuRun.command, resources: 'cpu=1 mem=1G gpu=0.5 license=1' })).runs[0]!.id,
      (await client.stage({ command: cpuRun.command, resources: 'cpu=1' })).runs[0]!.id,
      // Fits the worker's capacity but not what the two before it leave: its blocked head.
      (await client.stage({ command: ['true'], resources: 'cpu=2' })).runs[0]!.id,
      (await client.stage({ command: ['true'], resources: 'cpu=1' })).runs[0]!.id,
    ];
    await client.holdRuns([parked]);

    const first = await scrape([queue, client]);
    const text = first.text;
    let samples = first.samples;
    expect(valueOf(samples, 'fitq_up', { queue })).toBe(1);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'staged' })).toBe(3);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'held' })).toBe(1);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'running' })).toBe(0);
    expect(valueOf(samples, 'fitq_staged_runs', { queue, shape: 'cpu=1,gpu=0.5,license=1,mem=1000000000' })).toBe(1);
    expect(valueOf(samples, 'fitq_staged_runs', { queue, shape: 'cpu=1' })).toBe(1);
    expect(valueOf(samples, 'fitq_staged_runs', { queue, shape: 'cpu=2' })).toBe(1);
    expect(valueOf(samples, 'fitq_pool_capacity', { queue, resource: 'license' })).toBe(2);
    expect(valueOf(samples, 'fitq_pool_reserved', { queue, resource: 'license' })).toBe(0);
    expect(valueOf(samples, 'fitq_run_wait_seconds_count', { queue })).toBe(0);
    const types = typesOf(text);
    expect(types.get('fitq_runs')).toBe('gauge');
    expect(types.get('fitq_runs_finished_total')).toBe('counter');
    expect(types.get('fitq_run_wait_seconds')).toBe('histogram');
    expect(types.get('fitq_run_duration_seconds')).toBe('histogram');

    // (cpu=2.3: 2.3 - 0.3 is not 2 in floating point; reserved amounts are exact.)
    await startTestWorker(queue, { name: 'box', resources: 'cpu=2.3 mem=2G', gpus: '0,1' });
    await status(client, a, (run) => run.status === 'running');
    await status(client, b, (run) => run.status === 'running');

    ({ samples } = await scrape([queue, client]));
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'running' })).toBe(2);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'staged' })).toBe(1);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'held' })).toBe(1);
    expect(samplesOf(samples, 'fitq_staged_runs', { queue }).map((sample) => sample.labels.shape)).toEqual(['cpu=2']);
    const box = { queue, worker: 'box' };
    expect(valueOf(samples, 'fitq_worker_alive', { ...box, Hostname: hostname() })).toBe(1);
    expect(valueOf(samples, 'fitq_worker_running_runs', box)).toBe(2);
    expect(valueOf(samples, 'fitq_worker_capacity', { ...box, resource: 'cpu' })).toBe(2.3);
    expect(valueOf(samples, 'fitq_worker_capacity', { ...box, resource: 'mem' })).toBe(2e9);
    expect(valueOf(samples, 'fitq_worker_capacity', { ...box, resource: 'gpu' })).toBe(2);
    expect(valueOf(samples, 'fitq_worker_reserved', { ...box, resource: 'cpu' })).toBe(2);
    expect(valueOf(samples, 'fitq_worker_concurrency', box)).toBe(0);
    expect(valueOf(samples, 'fitq_worker_holding', box)).toBe(1);
    expect(valueOf(samples, 'fitq_worker_drained', box)).toBe(0);
    expect(valueOf(samples, 'fitq_worker_reserved', { ...box, resource: 'mem' })).toBe(1e9);
    expect(valueOf(samples, 'fitq_worker_reserved', { ...box, resource: 'gpu' })).toBe(0.5);
    // Half of one device taken (pack: device 0), the other whole; labelled as DCGM's exporter labels devices.
    const devices = samplesOf(samples, 'fitq_gpu_free_share', { ...box, Hostname: hostname() });
    expect(devices.map((sample) => [sample.labels.gpu, sample.value]).sort()).toEqual([['0', 0.5], ['1', 1]]);
    expect(valueOf(samples, 'fitq_pool_reserved', { queue, resource: 'license' })).toBe(1);
    expect(valueOf(samples, 'fitq_run_wait_seconds_count', { queue })).toBe(2);
    expect(valueOf(samples, 'fitq_runs_finished_total', { queue, status: 'completed' })).toBe(0);
    expect(valueOf(samples, 'fitq_worker_heartbeat_age_seconds', box)).toBeLessThan(30);

    gpuRun.open();
    cpuRun.open();
    await status(client, a, ended);
    await status(client, b, ended);
    await status(client, big, ended);

    ({ samples } = await scrape([queue, client]));
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'completed' })).toBe(3);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'staged' })).toBe(0);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'held' })).toBe(1);
    expect(samplesOf(samples, 'fitq_staged_runs', { queue })).toEqual([]);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'running' })).toBe(0);
    expect(valueOf(samples, 'fitq_runs_finished_total', { queue, status: 'completed' })).toBe(3);
    expect(valueOf(samples, 'fitq_worker_holding', box)).toBe(0);
    expect(valueOf(samples, 'fitq_worker_reserved', { ...box, resource: 'cpu' })).toBe(0);
    expect(valueOf(samples, 'fitq_worker_reserved', { ...box, resource: 'gpu' })).toBe(0);
    expect(samplesOf(samples, 'fitq_gpu_free_share', box).map((sample) => sample.value)).toEqual([1, 1]);
    expect(valueOf(samples, 'fitq_pool_reserved', { queue, resource: 'license' })).toBe(0);
    // The histograms count what ended: the three runs, each within its +Inf bucket and its sum.
    expect(valueOf(samples, 'fitq_run_duration_seconds_count', { queue, status: 'completed' })).toBe(3);
    expect(valueOf(samples, 'fitq_run_duration_seconds_bucket', { queue, status: 'completed', le: '+Inf' })).toBe(3);
    expect(valueOf(samples, 'fitq_run_duration_seconds_sum', { queue, status: 'completed' })).toBeGreaterThan(0);
    expect(valueOf(samples, 'fitq_run_wait_seconds_count', { queue })).toBe(3);
    // Buckets are cumulative.
    const buckets = samplesOf(samples, 'fitq_run_wait_seconds_bucket', { queue }).map((sample) => sample.value);
    expect(buckets).toEqual([...buckets].sort((x, y) => x - y));
    expectNoRunIds(samples, [a, b, big, parked]);
  });

  it('counts a timed-out run in finished_total{status="timeout"}, a lost run in {status="lost"}, and a re-staged one in restaged_total', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const timedOut = (await client.stage({ command: ['sleep', '30'], resources: 'slot=1', timeLimit: 1000 })).runs[0]!.id;
    const worker = spawnCliWorker(queue, ['-r', 'slot=1', '--kill-grace', '1', '--name', 'limits']);
    expect((await status(client, timedOut, ended)).status).toBe('timeout');

    // A worker killed under two runs: one without retries ends lost, one with a retry is staged again.
    const victim = spawnCliWorker(queue, ['-r', 'foo=2', '--name', 'victim', '--lease', '1', '--kill-grace', '1']);
    const lost = (await client.stage({ command: ['sleep', '30'], resources: 'foo=1' })).runs[0]!.id;
    const retried = (await client.stage({ command: ['sleep', '30'], resources: 'foo=1', retries: 1 })).runs[0]!.id;
    await status(client, lost, (run) => run.status === 'running');
    await status(client, retried, (run) => run.status === 'running');
    victim.process.kill('SIGKILL');
    await victim.exited;
    // The live worker reaps the dead one once its lease has run out (reads never reap).
    await worker.waitForMessage('Worker victim stopped renewing its lease: its runs are lost');
    expect((await client.getRun(lost)).status).toBe('lost');
    expect((await client.getRun(retried)).status).toBe('staged');

    const { samples } = await scrape([queue, client]);
    expect(valueOf(samples, 'fitq_runs_finished_total', { queue, status: 'timeout' })).toBe(1);
    expect(valueOf(samples, 'fitq_runs_finished_total', { queue, status: 'lost' })).toBe(1);
    expect(valueOf(samples, 'fitq_runs_finished_total', { queue, status: 'completed' })).toBe(0);
    expect(valueOf(samples, 'fitq_runs_restaged_total', { queue, cause: 'worker' })).toBe(1);
    expect(valueOf(samples, 'fitq_runs_restaged_total', { queue, cause: 'retry' })).toBe(0);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'timeout' })).toBe(1);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'lost' })).toBe(1);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'staged' })).toBe(1);
    expect(valueOf(samples, 'fitq_run_duration_seconds_count', { queue, status: 'timeout' })).toBe(1);
    expect(valueOf(samples, 'fitq_run_duration_seconds_count', { queue, status: 'lost' })).toBe(1);
    // Three runs started once each (the re-staged one's second wait is not counted: it is waiting now).
    expect(valueOf(samples, 'fitq_run_wait_seconds_count', { queue })).toBe(3);
    expect(samplesOf(samples, 'fitq_worker_alive', { queue }).map((sample) => sample.labels.worker)).toEqual(['limits']);
    expectNoRunIds(samples, [timedOut, lost, retried]);
    worker.process.kill('SIGTERM');
    await worker.exited;
  });

  it('keeps counting runs that retention removed: the counters and histograms are Redis\'s, not the stored runs\'', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.setRetention({ keepCompleted: 0 });
    await client.stage({ command: ['true'], resources: 'cpu=1', repeat: 3 });
    const { worker } = await startTestWorker(queue, { name: 'once', resources: 'cpu=1', runOnce: true });
    await worker.done;
    const { samples } = await scrape([queue, client]);
    // (The run that ended last stays until the next one ends: trimEndedRuns.)
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'completed' })).toBe(1);
    expect(valueOf(samples, 'fitq_runs_finished_total', { queue, status: 'completed' })).toBe(3);
    expect(valueOf(samples, 'fitq_run_duration_seconds_count', { queue, status: 'completed' })).toBe(3);
    expect(valueOf(samples, 'fitq_run_wait_seconds_count', { queue })).toBe(3);
    // The worker left: it is no longer shown.
    expect(samplesOf(samples, 'fitq_worker_alive', { queue })).toEqual([]);
  });

  it('scrapes as the read-only user of docs/security.md: the same numbers as with every permission', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.setPool('license=1');
    const held = gate();
    const running = (await client.stage({ command: held.command, resources: 'cpu=1 license=1' })).runs[0]!.id;
    await client.stage({ command: ['true'], resources: 'cpu=8' });
    await startTestWorker(queue, { name: 'w', resources: 'cpu=2', gpus: '0' });
    await status(client, running, (run) => run.status === 'running');
    const user = `fitq-metrics-${queue}`;
    await client.redis.call('ACL', 'SETUSER', user, 'reset', ...aclRule('reader', queue, 'pw').split(/\s+/));
    try {
      const url = new URL(redisUrl());
      url.username = user;
      url.password = 'pw';
      const reader = await connectClient(queue, url.toString());
      const [full, read] = [await scrape([queue, client]), await scrape([queue, reader])];
      expect(valueOf(read.samples, 'fitq_up', { queue })).toBe(1);
      // Everything but the heartbeat's age (read a moment later) is the same.
      const steady = (text: string) => text.split('\n').filter((line) => !line.startsWith('fitq_worker_heartbeat_age_seconds{'));
      expect(steady(read.text)).toEqual(steady(full.text));
      expect(valueOf(read.samples, 'fitq_pool_reserved', { queue, resource: 'license' })).toBe(1);
    } finally {
      held.open();
      await client.redis.call('ACL', 'DELUSER', user);
    }
  });

  it('is not thrown by entries fitq never writes: a scrape still shows the rest', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const ended = (await client.stage({ command: ['true'], resources: 'cpu=1' })).runs[0]!.id;
    await client.cancelRun(ended);
    const { keys, redis } = client;
    // A failed member whose key is no hash, one that is no run id, a parked one likewise; a worker name that is none.
    await redis.set(keys.run('junk'), 'x');
    await redis.zadd(keys.queue.key('failed'), 1, 'junk', 2, 'no}id');
    await redis.zadd(keys.queue.key('waiting-children'), 1, 'junk');
    await redis.zadd(keys.workers, Date.now() + 60_000, 'no}worker');
    const { samples } = await scrape([queue, client]);
    expect(valueOf(samples, 'fitq_up', { queue })).toBe(1);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'canceled' })).toBe(1);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'failed' })).toBe(2);
    expect(valueOf(samples, 'fitq_runs', { queue, status: 'staged' })).toBe(1);
    expect(valueOf(samples, 'fitq_runs_finished_total', { queue, status: 'canceled' })).toBe(1);
    expect(samplesOf(samples, 'fitq_worker_alive', { queue })).toEqual([]);
    await redis.del(keys.run('junk'), keys.queue.key('failed'), keys.queue.key('waiting-children'), keys.workers);
  });

  it('shows each namespace under its own queue label, and a namespace it cannot read as fitq_up 0', async () => {
    const [one, two] = [newQueue(), newQueue()];
    const first = await connectClient(one);
    const second = await connectClient(two);
    await first.stage({ command: ['true'], resources: 'cpu=1', repeat: 3 });
    await second.stage({ command: ['true'], resources: 'cpu=1' });
    const broken = await connectClient(newQueue());
    await broken.close();
    const { samples } = await scrape([one, first], [two, second], ['gone', broken]);
    expect(valueOf(samples, 'fitq_runs', { queue: one, status: 'staged' })).toBe(3);
    expect(valueOf(samples, 'fitq_runs', { queue: two, status: 'staged' })).toBe(1);
    expect(valueOf(samples, 'fitq_up', { queue: 'gone' })).toBe(0);
    expect(samplesOf(samples, 'fitq_runs', { queue: 'gone' })).toEqual([]);
    // As a fetch Response, for the dashboard's route.
    const response = await namespaceMetricsResponse(new Map([[one, first]]));
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(valueOf(parseExposition(await response.text()), 'fitq_runs', { queue: one, status: 'staged' })).toBe(3);
  });
});
