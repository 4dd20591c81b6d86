/**
 * The scenarios of the seed scheduler, as fitq users see them from the CLI,
 * with real worker processes and real runs.
 */
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { connectClient, FIXTURES, fitq, messages, newQueue, parseJsonLog } from '../support/fitq.js';
import type { FitqClient } from '../../src/client.js';

const STAMP = `${FIXTURES}stamp.sh`;

async function stage(queue: string, resources: string[], ...command: string[]): Promise<string> {
  const result = await fitq(['stage', ...resources.flatMap((spec) => ['-r', spec]), '--', ...command], { queue });
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout.trim();
}

async function runWorker(queue: string, ...args: string[]) {
  const result = await fitq(['worker', '--run-once', '--log-format', 'json', '--name', 'w1', ...args], { queue });
  expect(result.exitCode, result.stderr).toBe(0);
  return messages(parseJsonLog(result.stdout));
}

/** The [start, end] epoch ms a run's own process printed. */
async function stamps(client: FitqClient, runId: string): Promise<[number, number]> {
  const lines = (await client.readLog(runId)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));
  const at = (word: string) => Number(lines.find((line) => line.startsWith(`${word} `))?.split(' ')[1]);
  return [at('start'), at('end')];
}

/** The CUDA_VISIBLE_DEVICES a run's own process saw. */
async function seenDevices(client: FitqClient, runId: string): Promise<string> {
  const lines = (await client.readLog(runId)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));
  return lines.find((line) => line.startsWith('devices '))?.slice('devices '.length) ?? '';
}

const overlap = (a: [number, number], b: [number, number]) => Math.max(a[0], b[0]) < Math.min(a[1], b[1]);

describe('seed scenarios', () => {
  it('two runs needing foo=5 on a worker with foo=7 run one after the other', async () => {
    const queue = newQueue();
    const a = await stage(queue, ['foo=5'], STAMP, '0.5');
    const b = await stage(queue, ['foo=5'], STAMP, '0.5');
    const log = await runWorker(queue, '-r', 'foo=7');
    expect(log).toEqual([
      `Starting worker w1: as many runs at once as its capacity fits, and of runs that demand nothing at most ${availableParallelism()} (the CPU cores; --concurrency to change)`,
      'Worker resources: foo=7',
      `Scheduling run ${a} (requires foo=5)`,
      `Run ${a} started`,
      `Run ${a} completed`,
      `Scheduling run ${b} (requires foo=5)`,
      `Run ${b} started`,
      `Run ${b} completed`,
      'Stopping worker w1',
      'Worker w1 stopped',
    ]);
    const client = await connectClient(queue);
    expect(overlap(await stamps(client, a), await stamps(client, b))).toBe(false);
  });

  it('with foo=12 the same two runs overlap', async () => {
    const queue = newQueue();
    const a = await stage(queue, ['foo=5'], STAMP, '1');
    const b = await stage(queue, ['foo=5'], STAMP, '1');
    const log = await runWorker(queue, '-r', 'foo=12');
    expect(log.indexOf(`Run ${b} started`)).toBeLessThan(log.indexOf(`Run ${a} completed`));
    const client = await connectClient(queue);
    expect(overlap(await stamps(client, a), await stamps(client, b))).toBe(true);
  });

  it('a run needing a resource the worker lacks stays staged and is logged as ignored once', async () => {
    const queue = newQueue();
    const id = await stage(queue, ['foo=5'], 'true');
    const log = await runWorker(queue);
    expect(log.filter((line) => line.startsWith('Ignoring'))).toEqual([
      `Ignoring staged run ${id} (requires resources not defined for this worker: foo)`,
    ]);
    const client = await connectClient(queue);
    expect((await client.getRun(id)).status).toBe('staged');
  });

  it('-r foo=1 -r "bar=1 baz=1" runs on foo=1 bar=1 baz=2 and is ignored (bar, baz) on foo=1', async () => {
    const queue = newQueue();
    const id = await stage(queue, ['foo=1', 'bar=1 baz=1'], 'true');
    const ignoredLog = await runWorker(queue, '-r', 'foo=1');
    expect(ignoredLog).toContain(`Ignoring staged run ${id} (requires resources not defined for this worker: bar, baz)`);
    const log = await runWorker(queue, '-r', 'foo=1 bar=1 baz=2');
    expect(log).toContain('Worker resources: bar=1 baz=2 foo=1');
    expect(log).toContain(`Scheduling run ${id} (requires bar=1 baz=1 foo=1)`);
    expect(log).toContain(`Run ${id} completed`);
  });

  it('ten runs on a worker with --concurrency 10 all overlap', async () => {
    const queue = newQueue();
    const result = await fitq(['stage', '--repeat', '10', '--', STAMP, '2'], { queue });
    const ids = result.stdout.trim().split('\n');
    expect(ids).toHaveLength(10);
    await runWorker(queue, '--concurrency', '10');
    const client = await connectClient(queue);
    const intervals = await Promise.all(ids.map((id) => stamps(client, id)));
    const latestStart = Math.max(...intervals.map(([start]) => start));
    const earliestEnd = Math.min(...intervals.map(([, end]) => end));
    expect(latestStart).toBeLessThan(earliestEnd);
  });

  it('with --concurrency 1 the same runs never overlap', async () => {
    const queue = newQueue();
    const ids = (await fitq(['stage', '--repeat', '3', '--', STAMP, '0.2'], { queue })).stdout.trim().split('\n');
    await runWorker(queue, '--concurrency', '1');
    const client = await connectClient(queue);
    const intervals = await Promise.all(ids.map((id) => stamps(client, id)));
    for (let i = 1; i < intervals.length; i++) expect(overlap(intervals[i - 1]!, intervals[i]!)).toBe(false);
  });

  /** Stages aaa, bbb, ccc, ddd as the seed does, pinned with --gpus, with these demands. */
  async function stageSeedGpuRuns(queue: string, demands: Record<string, string>): Promise<void> {
    const pins = { aaa: '0', bbb: '0', ccc: '0,1', ddd: '1' };
    for (const [id, gpus] of Object.entries(pins)) {
      const result = await fitq(['stage', '--run-id', id, '--gpus', gpus, '-r', demands[id]!, '--', STAMP, '0.5'], { queue });
      expect(result.exitCode, result.stderr).toBe(0);
    }
  }

  /** aaa and ddd together, then bbb, then ccc; each saw its pinned devices. */
  async function expectSeedGpuOrder(queue: string): Promise<void> {
    const client = await connectClient(queue);
    const [aaa, bbb, ccc, ddd] = await Promise.all(['aaa', 'bbb', 'ccc', 'ddd'].map((id) => stamps(client, id)));
    expect(overlap(aaa!, ddd!)).toBe(true);
    expect(bbb![0]).toBeGreaterThanOrEqual(aaa![1]);
    expect(ccc![0]).toBeGreaterThanOrEqual(Math.max(bbb![1], ddd![1]));
    const devices = await Promise.all(['aaa', 'bbb', 'ccc', 'ddd'].map((id) => seenDevices(client, id)));
    expect(devices).toEqual(['0', '0', '0,1', '1']);
  }

  it('the seed GPU scenario: aaa and ddd together, then bbb, then ccc (three run-lengths, staging order kept)', async () => {
    const queue = newQueue();
    await stageSeedGpuRuns(queue, { aaa: 'gpu0=1', bbb: 'gpu0=1', ccc: 'gpu0=1 gpu1=1', ddd: 'gpu1=1' });
    // The worker declares no devices: the pins only set CUDA_VISIBLE_DEVICES.
    const log = await runWorker(queue, '-r', 'gpu0=1 gpu1=1');
    expect(log.filter((line) => line.startsWith('Scheduling'))).toEqual([
      'Scheduling run aaa (requires gpu0=1)',
      'Scheduling run ddd (requires gpu1=1)',
      'Scheduling run bbb (requires gpu0=1)',
      'Scheduling run ccc (requires gpu0=1 gpu1=1)',
    ]);
    await expectSeedGpuOrder(queue);
  });

  it('the seed GPU scenario with devices: --gpus 0,1 on the worker, gpu=1 and gpu=2 pinned runs, same order', async () => {
    const queue = newQueue();
    await stageSeedGpuRuns(queue, { aaa: 'gpu=1', bbb: 'gpu=1', ccc: 'gpu=2', ddd: 'gpu=1' });
    const log = await runWorker(queue, '--gpus', '0,1');
    expect(log.filter((line) => line.startsWith('Scheduling'))).toEqual([
      'Scheduling run aaa (requires gpu=1)',
      'Scheduling run ddd (requires gpu=1)',
      'Scheduling run bbb (requires gpu=1)',
      'Scheduling run ccc (requires gpu=2)',
    ]);
    await expectSeedGpuOrder(queue);
    const client = await connectClient(queue);
    expect((await client.getRun('ccc')).devices).toEqual([0, 1]);
  });

  it.each([
    ['foo', "invalid resource spec 'foo': expected NAME=VALUE"],
    ['foo=-1', "invalid resource spec 'foo=-1': value must not be negative"],
    ['foo=1 foo=2', "invalid resource spec 'foo=2': resource 'foo' given twice"],
  ])('refuses the invalid spec %j at stage and at worker, exit 2, changing nothing', async (spec, message) => {
    const queue = newQueue();
    const staged = await fitq(['stage', '-r', spec, '--', 'true'], { queue });
    expect(staged).toMatchObject({ exitCode: 2, stdout: '' });
    expect(staged.stderr.trim()).toBe(`Error: ${message}`);
    const worker = await fitq(['worker', '-r', spec, '--run-once'], { queue });
    expect(worker.exitCode).toBe(2);
    expect(worker.stderr.trim()).toBe(`Error: ${message}`);
    const client = await connectClient(queue);
    expect(await client.listRuns()).toEqual([]);
    expect(await client.listWorkers()).toEqual([]);
  });
});
