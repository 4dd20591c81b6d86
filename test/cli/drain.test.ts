/**
 * `fitq drain` / `fitq undrain`: a drained worker finishes what it runs,
 * claims and holds nothing more, and stays registered (claimRun enforces
 * it); `fitq workers` shows draining, then drained; a re-registration of the
 * same worker process stays drained.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Scripts } from '../../src/queue/scripts.js';
import type { WorkerRegistration } from '../../src/queue/worker-calls.js';
import { workerToJson } from '../../src/model/worker-record.js';
import { connectClient, fitq, newQueue } from '../support/fitq.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { waitFor } from '../support/wait.js';

const tempDirs: string[] = [];
afterEach(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const registrationOf = (name: string, resources: string): WorkerRegistration => ({
  name, token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources,
});

describe('fitq drain with a real worker', () => {
  it('lets the running run finish, starts nothing more, shows draining then drained; undrain starts the rest', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const dir = mkdtempSync(join(tmpdir(), 'fitq-drain-'));
    tempDirs.push(dir);
    const go = join(dir, 'go');
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'dw']);
    const first = (await client.stage({ command: ['sh', '-c', 'while [ ! -e "$0" ]; do sleep 0.05; done', go], resources: 'cpu=1' })).runs[0]!.id;
    await waitFor('the first run to start', async () => (await client.getRun(first)).status === 'running');

    const drained = await fitq(['drain', 'dw'], { queue });
    expect(drained).toEqual({ exitCode: 0, stdout: 'Worker dw draining: 1 run still running, it claims nothing more', stderr: '' });
    await worker.waitForMessage('Drained: claiming no more runs, 1 still running (fitq undrain dw)');
    const second = (await client.stage({ command: ['true'], resources: 'cpu=1' })).runs[0]!.id;
    const [workers, table] = await Promise.all([fitq(['workers', '--json'], { queue }), fitq(['workers'], { queue })]);
    expect(JSON.parse(workers.stdout)).toMatchObject([{ name: 'dw', state: 'draining', drained: true, runs: [first] }]);
    expect(table.stdout).toMatch(/^NAME +STATE .*\ndw +draining /);
    expect((await client.getRun(second)).reason).toBe('every live worker is drained: dw (fitq undrain)');

    writeFileSync(go, '');
    await client.waitForRuns([first]);
    // The run's end makes the worker claim at once: refused, it starts nothing.
    await waitFor('the worker to be idle', async () => (await client.listWorkers())[0]?.runs.length === 0);
    expect((await client.listWorkers()).map(workerToJson)).toMatchObject([{ name: 'dw', state: 'drained' }]);
    expect((await client.getRun(second)).status).toBe('staged');
    expect(await fitq(['drain', 'dw'], { queue })).toMatchObject({ exitCode: 0, stdout: 'Worker dw drained (already): it runs nothing and claims nothing more' });

    const undrained = await fitq(['undrain', 'dw', '--json'], { queue });
    expect(undrained.exitCode).toBe(0);
    expect(JSON.parse(undrained.stdout)).toMatchObject([{ name: 'dw', state: 'active', drained: false }]);
    expect(await client.waitForRuns([second])).toMatchObject([{ status: 'completed' }]);
    await worker.waitForMessage('Undrained: claiming runs again');
    expect(existsSync(go)).toBe(true);
  });

  it('stays drained when the same worker process registers again; refuses an unknown worker, draining nothing', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'again', '--lease', '2']);
    await worker.waitForMessage(/^Worker resources/);
    expect(await fitq(['drain', 'again', 'nosuch'], { queue })).toEqual({
      exitCode: 2, stdout: '', stderr: "Error: unknown worker 'nosuch' (no live worker has that name)",
    });
    expect((await client.listWorkers())[0]!.drainedAt).toBeUndefined();
    expect(await fitq(['drain', 'again'], { queue })).toMatchObject({ exitCode: 0 });
    await worker.waitForMessage(/^Drained: /);
    // Its registration is gone (as if reaped): it registers again, still drained.
    await client.redis.zrem(client.keys.workers, 'again');
    await worker.waitForMessage('Worker again registered again');
    expect((await client.listWorkers()).map(workerToJson)).toMatchObject([{ name: 'again', state: 'drained', drained: true }]);
    const run = (await client.stage({ command: ['true'], resources: 'cpu=1' })).runs[0]!.id;
    expect(await fitq(['undrain', 'again'], { queue })).toMatchObject({ exitCode: 0, stdout: 'Worker again undrained: it claims runs again' });
    expect(await client.waitForRuns([run])).toMatchObject([{ status: 'completed' }]);
  });
});

describe('claimRun for a drained worker', () => {
  it('claims nothing and drops the hold the worker had on its blocked head, in the same step as the drain', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker(registrationOf('w', 'x=2'))).toBe(true);
    const small = (await client.stage({ command: ['true'], resources: 'x=1' })).runs[0]!.id;
    const big = (await client.stage({ command: ['true'], resources: 'x=2' })).runs[0]!.id;
    const after = (await client.stage({ command: ['true'], resources: 'x=1' })).runs[0]!.id;
    expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'claimed', runId: small });
    expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'waiting', holding: big });
    expect(await client.redis.hgetall(client.keys.holds)).toEqual({ [big]: 'w' });

    expect(await scripts.setDrained('w', true)).toBe(true);
    expect(await client.redis.hgetall(client.keys.holds)).toEqual({});
    expect(await client.redis.hget(client.keys.worker('w').info, 'holding')).toBeNull();
    expect(await scripts.claimRun('w', 'tok', 0)).toEqual({ code: 'drained' });
    expect(await client.redis.hgetall(client.keys.holds)).toEqual({});
    expect((await client.getRun(after)).status).toBe('staged');
    expect(await scripts.setDrained('w', true)).toBe(false);
    expect(await scripts.setDrained('nobody', true)).toBeUndefined();

    // Pausing the namespace and draining a worker combine: either keeps it from claiming.
    expect(await client.setPaused(true)).toBe(true);
    expect(await scripts.claimRun('w', 'tok', 0)).toEqual({ code: 'drained' });
    expect(await scripts.setDrained('w', false)).toBe(true);
    expect(await scripts.claimRun('w', 'tok', 0)).toEqual({ code: 'paused' });
    expect(await scripts.setDrained('w', true)).toBe(true);
    expect(await client.setPaused(false)).toBe(true);
    expect(await scripts.claimRun('w', 'tok', 0)).toEqual({ code: 'drained' });
    expect(await scripts.setDrained('w', false)).toBe(true);
    expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'waiting', holding: big });
    await scripts.deregisterWorker('w', 'tok');
  });

  it('says why a run waits when only a drained worker could start it', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker(registrationOf('gpu-box', 'gpu=1'))).toBe(true);
    expect(await scripts.registerWorker({ ...registrationOf('cpu-box', 'cpu=1'), token: 'tok2' })).toBe(true);
    expect(await scripts.setDrained('gpu-box', true)).toBe(true);
    const { runs, warnings } = await client.stage({ command: ['true'], resources: 'gpu=1' });
    expect(warnings).toEqual([`run ${runs[0]!.id} staged, but no live worker can run it yet: no live worker has: gpu; drained: gpu-box (fitq undrain)`]);
    expect((await client.getRun(runs[0]!.id)).reason).toBe('no live worker has: gpu; drained: gpu-box (fitq undrain)');
    await scripts.deregisterWorker('gpu-box', 'tok');
    await scripts.deregisterWorker('cpu-box', 'tok2');
  });
});
