/**
 * Devices as nvidia-smi sees them, through real CLI workers and real runs,
 * with the stand-in nvidia-smi answering from a state file the test
 * changes: a device a process fitq did not start holds takes no run, and
 * the run waiting for it starts once the process is gone; a worker's own
 * runs and the ignore list leave a device usable; a lost device takes no
 * run, is logged once and comes back; a stale reading places nothing.
 */
import { join } from 'node:path';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { spawnCliWorker, type CliWorker } from '../support/cli-worker.js';
import { a100, fakeGpuBox } from '../support/fake-gpu.js';
import { cliWhy, connectClient, FIXTURES, fitq, newQueue } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

const PRINT_DEVICES = ['sh', '-c', 'echo "dev=$CUDA_VISIBLE_DEVICES"'];
const PYTHON = { gpu: 0, pid: 4242, usedMiB: 21800, name: '/usr/bin/python3' };
const BUSY_WHY = 'used by a process fitq did not start (pid 4242, python3, 21.3 GiB)';
const LOST_WHY = 'nvidia-smi cannot reach it: Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU';

async function stage(client: FitqClient, gpu: string, command = PRINT_DEVICES): Promise<string> {
  const { runs } = await client.stage({ command, resources: `gpu=${gpu}` });
  return runs[0]!.id;
}

/** The devices a completed run printed. */
async function devicesOf(client: FitqClient, runId: string): Promise<string> {
  const run = await client.waitForEnd(runId);
  expect(run.status).toBe('completed');
  const lines = (await client.readLog(runId)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));
  return lines.find((line) => line.startsWith('dev='))!.slice('dev='.length);
}

/** Resolves once `count` more probes of the worker have landed in Redis (its reading's `at` changed that often). */
async function probesLanded(client: FitqClient, worker: string, count: number): Promise<void> {
  let last = await client.redis.hget(client.keys.worker(worker).gpus, 'at');
  // (A reading not yet recorded counts as the one before the first.)
  let seen = 0;
  await waitFor(`${count} GPU probes of ${worker}`, async () => {
    const at = await client.redis.hget(client.keys.worker(worker).gpus, 'at');
    if (at !== last) {
      seen += 1;
      last = at;
    }
    return seen >= count;
  });
}

function startWorker(queue: string, env: Record<string, string>, ...flags: string[]): CliWorker {
  return spawnCliWorker(queue, ['--gpus', 'auto', '--gpu-probe-interval', '1s', '--name', 'box', ...flags], undefined, env);
}

describe('devices held by processes fitq did not start', () => {
  it('places no run on a busy device, says why a run waits for it, and starts that run once the process is gone', async () => {
    const box = fakeGpuBox({ gpus: [a100('GPU-a'), a100('GPU-b')], processes: [PYTHON] });
    const queue = newQueue();
    const worker = startWorker(queue, box.env);
    await worker.waitForMessage(`GPU 0 is busy: ${BUSY_WHY}; no run is placed on it until that changes`);
    const client = await connectClient(queue);
    const pair = await stage(client, '2');
    // A whole device goes to the lowest free index: device 0, were it not busy.
    expect(await devicesOf(client, await stage(client, '1'))).toBe('1');
    expect((await cliWhy(queue)).get(pair)).toContain(`waiting for GPU 0: ${BUSY_WHY} on box`);
    const workers = await fitq(['workers'], { queue });
    expect(workers.stdout).toContain('0:foreign 1:free');
    expect(workers.stdout).toContain(`GPU 0 on box: ${BUSY_WHY}`);
    const [json] = JSON.parse((await fitq(['workers', '--json'], { queue })).stdout) as { devices: Record<string, Record<string, unknown>> }[];
    expect(json!.devices['0']).toMatchObject({ free: 1, state: 'busy', why: BUSY_WHY, memoryTotalMiB: 40960, memoryForeignMiB: 21800 });
    expect(json!.devices['1']).toMatchObject({ free: 1, state: 'ok', memoryForeignMiB: 0 });

    box.change((state) => (state.processes = []));
    await worker.waitForMessage('GPU 0 is usable again');
    expect(await devicesOf(client, pair)).toBe('0,1');
  });

  it('counts the processes of its own runs and of the ignore list as no foreign process', async () => {
    const box = fakeGpuBox({ gpus: [a100('GPU-a')], processes: [{ gpu: 0, pid: 5151, usedMiB: 20, name: '/usr/lib/xorg/Xorg' }] });
    const queue = newQueue();
    startWorker(queue, box.env, '--gpu-ignore-process', 'Xorg');
    const client = await connectClient(queue);
    const gate = join(mkdtempSync(join(tmpdir(), 'fitq-gate-')), 'done');
    const user = await stage(client, '0.5', [`${FIXTURES}gpu-user.mjs`, gate]);
    await waitFor('the run using its GPU', async () => (await client.readLog(user)).some((entry) => entry.kind === 'line' && entry.line === 'using'));
    // A probe that began after the run listed itself on the device has landed.
    await probesLanded(client, 'box', 2);
    expect(box.read().processes!.map((process) => process.name)).toEqual(['/usr/lib/xorg/Xorg', 'python']);
    // The other half of the device is still usable beside the run.
    expect(await devicesOf(client, await stage(client, '0.5'))).toBe('0');
    expect((await client.getRun(user))?.status).toBe('running');
    writeFileSync(gate, '');
    const ended = await client.waitForEnd(user);
    expect(ended.status).toBe('completed');
    // What its process held on the device, as the probe read it, is what the run used there.
    expect(ended.usage?.gpuPeakBytes).toEqual({ 0: 1024 * 1_048_576 });
    expect((await fitq(['runs', 'show', user], { queue })).stdout).toMatch(/^gpu memory: GPU 0 1\.1G peak$/m);
  });

  it('trusts its own bookkeeping only with --gpu-foreign ignore', async () => {
    const box = fakeGpuBox({ gpus: [a100('GPU-a')], processes: [PYTHON] });
    const queue = newQueue();
    const worker = startWorker(queue, box.env, '--gpu-foreign', 'ignore');
    await worker.waitForMessage('GPU devices: 0 (probed every 1 s through nvidia-smi; processes fitq did not start are ignored (--gpu-foreign ignore))');
    const client = await connectClient(queue);
    expect(await devicesOf(client, await stage(client, '1'))).toBe('0');
  });
});

describe('devices nvidia-smi cannot reach, and readings grown old', () => {
  it('marks a lost device, logs it once, places nothing on it, and uses it again once nvidia-smi reaches it', async () => {
    const box = fakeGpuBox({ gpus: [a100('GPU-a'), a100('GPU-b')] });
    const queue = newQueue();
    const worker = startWorker(queue, box.env);
    await worker.waitForMessage('GPU devices: 0,1 (probed every 1 s through nvidia-smi)');
    box.change((state) => (state.gpus[0]!.lost = true));
    const lostLine = `GPU 0 is lost: ${LOST_WHY}; no run is placed on it until that changes`;
    await worker.waitForMessage(lostLine);
    const client = await connectClient(queue);
    const pair = await stage(client, '2');
    expect(await devicesOf(client, await stage(client, '1'))).toBe('1');
    expect((await cliWhy(queue)).get(pair)).toContain(`waiting for GPU 0: lost, ${LOST_WHY} on box`);
    expect((await fitq(['workers'], { queue })).stdout).toContain('0:lost 1:free');
    await probesLanded(client, 'box', 3);
    expect(worker.messages().filter((message) => message === lostLine)).toHaveLength(1);

    box.change((state) => (state.gpus[0]!.lost = false));
    await worker.waitForMessage('GPU 0 is usable again: nvidia-smi reaches it');
    expect(await devicesOf(client, pair)).toBe('0,1');
  });

  it('starts with the devices nvidia-smi still reaches when one fell off the bus before it started', async () => {
    const box = fakeGpuBox({ gpus: [{ ...a100('GPU-a'), lost: true }, a100('GPU-b')] });
    const queue = newQueue();
    const worker = startWorker(queue, box.env);
    await worker.waitForMessage(
      `--gpus auto: nvidia-smi cannot reach some devices, which this worker goes without until it restarts: Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU`,
    );
    await worker.waitForMessage('GPU devices: 1 (probed every 1 s through nvidia-smi)');
    const client = await connectClient(queue);
    expect(await devicesOf(client, await stage(client, '1'))).toBe('1');
  });

  it('places no run from a reading older than two probe intervals', async () => {
    const box = fakeGpuBox({ gpus: [a100('GPU-a')] });
    const queue = newQueue();
    const worker = spawnCliWorker(queue, ['--gpus', 'auto', '--gpu-probe-interval', '1h', '--name', 'box'], undefined, box.env);
    await worker.waitForMessage('GPU devices: 0 (probed every 3600 s through nvidia-smi)');
    const client = await connectClient(queue);
    await waitFor('the first reading', async () => (await client.redis.hget(client.keys.worker('box').gpus, 'at')) ?? undefined);
    // The reading as the worker's probe left it three hours ago: older than two intervals.
    const [seconds] = await client.redis.time();
    await client.redis.hset(client.keys.worker('box').gpus, 'at', String((Number(seconds) - 3 * 3600) * 1000));
    const run = await stage(client, '1');
    expect((await cliWhy(queue)).get(run)).toMatch(/waiting for GPU 0: its GPU reading is 108\d\d s old \(nvidia-smi slow or the worker busy\) on box/);
    expect((await fitq(['workers'], { queue })).stdout).toContain('0:stale');
    expect((await client.getRun(run))?.status).toBe('staged');
    // A fresh reading: the run starts (the worker's next claim, at the latest its poll).
    await client.redis.hset(client.keys.worker('box').gpus, 'at', String(Number(seconds) * 1000));
    expect(await devicesOf(client, run)).toBe('0');
  });
});

describe('memory on each device (gpumem)', () => {
  it('puts two gpumem runs that do not fit on one device on two, and a third waits for the memory, counting what runs allocated once', async () => {
    const box = fakeGpuBox({ gpus: [a100('GPU-a'), a100('GPU-b')] });
    const queue = newQueue();
    const worker = startWorker(queue, box.env);
    await worker.waitForMessage('Worker resources: gpu=2 gpumem=85.899G');
    const client = await connectClient(queue);
    const gates = mkdtempSync(join(tmpdir(), 'fitq-gates-'));
    const user = async (name: string) => {
      const { runs } = await client.stage({ command: [`${FIXTURES}gpu-user.mjs`, join(gates, name)], resources: 'gpu=0.5 gpumem=30G' });
      const id = runs[0]!.id;
      await waitFor(`run ${name} using its GPU`, async () => (await client.readLog(id)).some((entry) => entry.kind === 'line' && entry.line === 'using'));
      return id;
    };
    // Halves pack onto one device, unless their memory cannot share it.
    const first = await user('first');
    const second = await user('second');
    expect((await client.getRun(first)).devices).toEqual([0]);
    expect((await client.getRun(second)).devices).toEqual([1]);
    // Each device: 40,548 MiB unused at start, less the 30G booked; the 1 GiB each run allocated is not counted twice.
    await probesLanded(client, 'box', 2);
    const third = await stage(client, '0.5 gpumem=20G');
    expect((await cliWhy(queue)).get(third)).toContain('needs gpumem=20G on one device; GPU 0 has 12.5G free of 42.9G');
    const never = await stage(client, '1 gpumem=50G');
    expect((await cliWhy(queue)).get(never)).toContain('needs more than any live worker has: gpumem=50G on one device, the largest GPU of box has 42.9G');
    writeFileSync(join(gates, 'first'), '');
    expect(await devicesOf(client, third)).toBe('0');
    writeFileSync(join(gates, 'second'), '');
    expect((await client.waitForEnd(second)).status).toBe('completed');
  });

  it('refuses a declared gpumem on a worker that measures it (exit 2)', async () => {
    const box = fakeGpuBox({ gpus: [a100('GPU-a')] });
    const result = await fitq(['worker', '--gpus', 'auto', '-r', 'gpumem=80G', '--run-once'], { queue: newQueue(), env: box.env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe('Error: gpumem is measured on each GPU device by nvidia-smi: do not declare it (or start the worker with --gpu-probe-interval 0)');
  });

  it('refuses gpumem without a gpu demand or a pin (exit 2)', async () => {
    const result = await fitq(['stage', '-r', 'gpumem=20G', '--', 'true'], { queue: newQueue() });
    expect(result).toMatchObject({
      exitCode: 2,
      stderr: 'Error: gpumem=20G is memory on each GPU device the run gets: demand gpu too (gpu=1 gpumem=20G), or pin devices with --gpus',
    });
  });
});
