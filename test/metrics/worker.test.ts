/**
 * `fitq worker --metrics-port`: a real worker process serves its claim
 * durations by outcome and its wake-up latency; bad ports are refused.
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnCliWorker, type CliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue } from '../support/fitq.js';
import { parseExposition, samplesOf, typesOf, valueOf } from '../support/prometheus.js';
import { waitFor } from '../support/wait.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** The URL the worker logged it serves its metrics at. */
async function metricsUrl(worker: CliWorker): Promise<string> {
  await worker.waitForMessage(/^Metrics at /);
  return String(worker.logs().find((entry) => entry.metricsUrl !== undefined)!.metricsUrl);
}

async function scrape(url: string): Promise<{ text: string; samples: ReturnType<typeof parseExposition> }> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  return { text, samples: parseExposition(text) };
}

function expectUsageError(result: { exitCode: number; stderr: string }, ...parts: string[]): void {
  expect(result.exitCode, result.stderr).toBe(2);
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  for (const part of parts) expect(lines[0]).toContain(part);
  expect(result.stderr).not.toMatch(/^\s+at /m);
}

describe('fitq worker --metrics-port', () => {
  it('serves claim durations by outcome and wake-up latency after claims, on 127.0.0.1', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=2', '--name', 'metered', '--metrics-port', '0']);
    const url = await metricsUrl(worker);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    // Idle: its first claims found nothing.
    await waitFor('an idle claim', async () => samplesOf((await scrape(url)).samples, 'fitq_worker_claim_duration_seconds_count', { outcome: 'idle' }).length > 0);

    const { runs } = await client.stage({ command: ['true'], resources: 'cpu=1', repeat: 3 });
    await waitFor('the runs to complete', async () => {
      const statuses = await Promise.all(runs.map(async (run) => (await client.getRun(run.id)).status));
      return statuses.every((status) => status === 'completed');
    }, 15_000);

    const { text, samples } = await scrape(url);
    const labels = { queue, worker: 'metered' };
    expect(typesOf(text).get('fitq_worker_claim_duration_seconds')).toBe('histogram');
    expect(typesOf(text).get('fitq_worker_wakeup_latency_seconds')).toBe('histogram');
    // One claimed claim per run, each in its +Inf bucket, taking some time.
    expect(valueOf(samples, 'fitq_worker_claim_duration_seconds_count', { ...labels, outcome: 'claimed' })).toBe(3);
    expect(valueOf(samples, 'fitq_worker_claim_duration_seconds_bucket', { ...labels, outcome: 'claimed', le: '+Inf' })).toBe(3);
    expect(valueOf(samples, 'fitq_worker_claim_duration_seconds_sum', { ...labels, outcome: 'claimed' })).toBeGreaterThan(0);
    expect(valueOf(samples, 'fitq_worker_claim_duration_seconds_count', { ...labels, outcome: 'idle' })).toBeGreaterThanOrEqual(1);
    // The staging event woke it: that wake-up was answered by a claim that claimed.
    const wakeUps = valueOf(samples, 'fitq_worker_wakeup_latency_seconds_count', { ...labels, outcome: 'claimed' });
    expect(wakeUps).toBeGreaterThanOrEqual(1);
    expect(wakeUps).toBeLessThanOrEqual(3);
    expect(valueOf(samples, 'fitq_worker_wakeup_latency_seconds_sum', { ...labels, outcome: 'claimed' })).toBeGreaterThan(0);
    // Nothing names a run.
    for (const run of runs) expect(text).not.toContain(run.id);

    const other = await fetch(url.replace(/\/metrics$/, '/'));
    expect(other.status).toBe(404);
    worker.process.kill('SIGTERM');
    expect((await worker.exited).exitCode).toBe(0);
    await expect(fetch(url)).rejects.toThrow();
  });

  it('binds the address --metrics-host gives', async () => {
    const worker = spawnCliWorker(newQueue(), ['-r', 'cpu=1', '--metrics-port', '0', '--metrics-host', '0.0.0.0']);
    const url = await metricsUrl(worker);
    expect(url).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/metrics$/);
    const local = url.replace('0.0.0.0', '127.0.0.1');
    await waitFor('a claim', async () => samplesOf((await scrape(local)).samples, 'fitq_worker_claim_duration_seconds_count').length > 0);
  });

  it.each(['abc', '70000', '1.5', ''])('refuses --metrics-port %j with exit 2, quoting it', async (port) => {
    const result = await fitq(['worker', '-r', 'cpu=1', '--metrics-port', port], { queue: newQueue(), timeoutMs: 20_000 });
    expectUsageError(result, `expected --metrics-port to be a port number from 0 to 65535, got '${port}'`);
  });

  it('refuses --metrics-host without --metrics-port', async () => {
    const result = await fitq(['worker', '-r', 'cpu=1', '--metrics-host', '0.0.0.0'], { queue: newQueue(), timeoutMs: 20_000 });
    expectUsageError(result, "--metrics-host '0.0.0.0' goes with --metrics-port");
  });

  it('refuses a port in use before registering: exit 2, no worker left', async () => {
    const queue = newQueue();
    const taken = createServer();
    servers.push(taken);
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = String((taken.address() as { port: number }).port);
    const result = await fitq(['worker', '-r', 'cpu=1', '--metrics-port', port], { queue, timeoutMs: 20_000 });
    expectUsageError(result, `cannot serve metrics on --metrics-host '127.0.0.1' --metrics-port '${port}': the port is in use`);
    const client = await connectClient(queue);
    expect(await client.listWorkers()).toEqual([]);
  });
});
