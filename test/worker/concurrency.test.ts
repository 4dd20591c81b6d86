/**
 * How many runs a worker runs at once. Its declared capacity limits the
 * runs that demand it (`-r cpu=8` runs eight `cpu=1` runs at once whatever
 * the number of cores); runs that demand nothing are bounded by the CPU
 * cores; `--concurrency` bounds every run. The worker's first log line says
 * which limit holds. A real CLI worker; every run waits for the test.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, newQueue } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';
import type { FitqClient } from '../../src/client.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A gate the runs wait at, and the command that waits there. */
function gate(): { open: () => void; command: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'fitq-concurrency-'));
  dirs.push(dir);
  const path = join(dir, 'go');
  return { open: () => writeFileSync(path, ''), command: ['sh', '-c', `while [ ! -e '${path}' ]; do sleep 0.05; done`] };
}

async function statuses(client: FitqClient, ids: readonly string[]): Promise<string[]> {
  return Promise.all(ids.map(async (id) => (await client.getRun(id)).status));
}

describe('a worker with declared capacity', () => {
  it('runs as many runs at once as its capacity fits, more than it has cores, and says so first', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const cores = availableParallelism();
    const wide = cores + 6;
    const { open, command } = gate();
    const ids = (await client.stage(Array.from({ length: wide }, () => ({ command, resources: 'cpu=1' })))).runs.map((run) => run.id);
    const worker = spawnCliWorker(queue, ['-r', `cpu=${wide}`, '--name', 'wide']);
    await waitFor(`all ${wide} runs running at once`, async () => (await statuses(client, ids)).every((status) => status === 'running'));
    expect(worker.messages()[0]).toBe(
      `Starting worker wide: as many runs at once as its capacity fits, and of runs that demand nothing at most ${cores} (the CPU cores; --concurrency to change)`,
    );
    open();
    await waitFor('the runs to complete', async () => (await statuses(client, ids)).every((status) => status === 'completed'));
    worker.process.kill('SIGTERM');
    expect((await worker.exited).exitCode).toBe(0);
  });

  it('runs at most as many runs that demand nothing as it has cores', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const cores = availableParallelism();
    const { open, command } = gate();
    const bare = (await client.stage(Array.from({ length: cores + 1 }, () => ({ command })))).runs.map((run) => run.id);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'bare', '--lease', '3']);
    await waitFor(`${cores} runs running`, async () => (await statuses(client, bare)).filter((status) => status === 'running').length === cores);
    // Long after the claims that started them (two heartbeats, a second apart), the last still waits.
    const beat = async () => Number(await client.redis.hget(client.keys.worker('bare').info, 'heartbeatAt'));
    for (let beats = 0; beats < 2; beats++) {
      const since = await beat();
      await waitFor('a heartbeat', async () => (await beat()) > since);
    }
    expect((await statuses(client, bare)).filter((status) => status === 'running')).toHaveLength(cores);
    // A run that demands what the worker has still starts.
    const demanding = (await client.stage({ command, resources: 'cpu=1' })).runs[0]!.id;
    await waitFor('the cpu=1 run to start', async () => (await client.getRun(demanding)).status === 'running');
    open();
    await waitFor('every run to complete', async () => (await statuses(client, [...bare, demanding])).every((status) => status === 'completed'));
    worker.process.kill('SIGTERM');
    expect((await worker.exited).exitCode).toBe(0);
  });

  it('with --concurrency, runs no more than that, and says so first', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { open, command } = gate();
    const ids = (await client.stage(Array.from({ length: 3 }, () => ({ command, resources: 'cpu=1' })))).runs.map((run) => run.id);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=8', '--concurrency', '2', '--name', 'two']);
    await waitFor('two runs running', async () => (await statuses(client, ids)).filter((status) => status === 'running').length === 2);
    expect((await statuses(client, ids)).sort()).toEqual(['running', 'running', 'staged']);
    expect(worker.messages()[0]).toBe('Starting worker two: at most 2 runs at once (--concurrency)');
    open();
    await waitFor('the runs to complete', async () => (await statuses(client, ids)).every((status) => status === 'completed'));
    worker.process.kill('SIGTERM');
    expect((await worker.exited).exitCode).toBe(0);
  });
});
