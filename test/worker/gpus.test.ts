/**
 * GPU devices: assigned atomically in the claim, shown to the run as
 * CUDA_VISIBLE_DEVICES, never given beyond one whole device's worth.
 * Workers use device lists (or a fake nvidia-smi), not real GPUs.
 */
import { chmodSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { connectClient, FIXTURES, fitq, newQueue, parseJsonLog, startTestWorker } from '../support/fitq.js';
import { a100, fakeGpuBox } from '../support/fake-gpu.js';

const SHOW_AND_STAMP = `echo "dev=$CUDA_VISIBLE_DEVICES order=$CUDA_DEVICE_ORDER"; exec ${FIXTURES}stamp.sh "$1"`;

interface DeviceRun {
  id: string;
  devices: string[];
  order: string;
  start: number;
  end: number;
  share: number;
}

async function stageGpuRuns(client: FitqClient, gpu: string, seconds: number, count: number): Promise<string[]> {
  const { runs } = await client.stage({ command: ['sh', '-c', SHOW_AND_STAMP, 'sh', String(seconds)], resources: `gpu=${gpu}`, repeat: count });
  return runs.map((run) => run.id);
}

async function deviceRuns(client: FitqClient, ids: string[]): Promise<DeviceRun[]> {
  return Promise.all(
    ids.map(async (id) => {
      const run = await client.waitForEnd(id);
      expect(run.status).toBe('completed');
      const lines = (await client.readLog(id)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));
      const [, devices = '', order = ''] = /^dev=(\S*) order=(\S*)$/.exec(lines[0] ?? '') ?? [];
      const at = (word: string) => Number(lines.find((line) => line.startsWith(`${word} `))?.split(' ')[1]);
      expect(devices.split(',').map(Number)).toEqual(run.devices);
      return { id, devices: devices.split(','), order, start: at('start'), end: at('end'), share: run.resources.gpu ?? 0 };
    }),
  );
}

/** Sums each device's shares over time: never above 1; returns the most runs seen on one device at once. */
function checkDevices(runs: DeviceRun[]): number {
  const events = runs.flatMap((run) => [
    { at: run.start, delta: 1, run },
    { at: run.end, delta: -1, run },
  ]);
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  const load = new Map<string, { share: number; runs: number }>();
  let peak = 0;
  for (const { delta, run } of events) {
    const perDevice = run.share >= 1 ? 1 : run.share;
    for (const device of run.devices) {
      const current = load.get(device) ?? { share: 0, runs: 0 };
      current.share += delta * perDevice;
      current.runs += delta;
      load.set(device, current);
      expect(current.share).toBeLessThanOrEqual(1 + 1e-9);
      peak = Math.max(peak, current.runs);
    }
  }
  return peak;
}

describe('GPU devices', () => {
  it('gives whole-GPU runs distinct devices, and a gpu=2 run two of them', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const singles = await stageGpuRuns(client, '1', 0.4, 4);
    const pair = await stageGpuRuns(client, '2', 0.2, 1);
    await startTestWorker(queue, { name: 'gpubox', gpus: '0,1' });
    const runs = await deviceRuns(client, [...singles, ...pair]);
    checkDevices(runs);
    expect(runs.every((run) => run.order === 'PCI_BUS_ID')).toBe(true);
    expect(runs.find((run) => run.id === pair[0])!.devices).toEqual(['0', '1']);
    const overlapping = runs.filter((a) => runs.some((b) => a !== b && Math.max(a.start, b.start) < Math.min(a.end, b.end)));
    expect(overlapping.length).toBeGreaterThan(0); // two single-GPU runs really ran side by side
    expect(await client.redis.hgetall(client.keys.worker('gpubox').devices)).toEqual({ 0: '1', 1: '1' });
    const [worker] = await client.listWorkers();
    expect(worker!.capacity.get('gpu')).toBe(2_000_000n);
  });

  it('lets fractional runs share a device, never beyond one whole device', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const halves = await stageGpuRuns(client, '0.5', 0.5, 6);
    await startTestWorker(queue, { name: 'sharer', gpus: '0,1' });
    const runs = await deviceRuns(client, halves);
    expect(runs.every((run) => run.devices.length === 1)).toBe(true);
    expect(checkDevices(runs)).toBe(2); // two halves shared a device
  });

  it('never places a run needing 1.5 GPUs on devices', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const [odd] = await stageGpuRuns(client, '1.5', 0.1, 1);
    const { worker } = await startTestWorker(queue, { gpus: '0,1', runOnce: true });
    await worker.done;
    expect((await client.getRun(odd!)).status).toBe('staged');
  });

  it('gives a pinned run exactly its devices; one without a gpu demand takes them whole', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const command = ['sh', '-c', SHOW_AND_STAMP, 'sh', '0.3'];
    const { runs: onThree } = await client.stage({ command, resources: 'gpu=1', gpus: '3', repeat: 2 });
    const { runs: wholeTwo } = await client.stage({ command, gpus: '2' });
    const { runs: halves } = await client.stage({ command, resources: 'gpu=0.5', gpus: '1', repeat: 2 });
    const { runs: elsewhere } = await client.stage({ command, resources: 'gpu=1', gpus: '7' });
    await startTestWorker(queue, { name: 'pinbox', gpus: '0,1,2,3' });
    const runs = await deviceRuns(client, [...onThree, ...wholeTwo, ...halves].map((run) => run.id));
    checkDevices(runs);
    expect(runs.map((run) => run.devices.join(','))).toEqual(['3', '3', '2', '1', '1']);
    const [first, second] = runs;
    expect(Math.max(first!.start, second!.start)).toBeGreaterThanOrEqual(Math.min(first!.end, second!.end)); // one after the other
    expect((await client.getRun(wholeTwo[0]!.id)).pinnedGpus).toEqual([2]);
    // Device 7 is not on the worker: the run stays staged, and says why.
    expect(await client.getRun(elsewhere[0]!.id)).toMatchObject({ status: 'staged', reason: 'no live worker has GPU device 7' });
  });

  it.each([
    [['--gpus', '0,x'], "invalid --gpus '0,x': expected device indices like 0,1,3 (0 to 1023)"],
    [['--gpus', '1,1'], "invalid --gpus '1,1': a device is listed twice"],
    [['--gpus', '0,1', '-r', 'gpu=1'], "--gpus '0,1' pins 2 devices but the run demands gpu=1: list 1 device"],
    [['--gpus', '0,1', '-r', 'gpu=0.5'], "--gpus '0,1' pins 2 devices but the run demands gpu=0.5: a fractional gpu shares exactly one device"],
  ])('refuses fitq stage %j, staging nothing', async (args, message) => {
    const queue = newQueue();
    const result = await fitq(['stage', ...args, '--', 'true'], { queue });
    expect(result).toMatchObject({ exitCode: 2, stdout: '' });
    expect(result.stderr.trim()).toBe(`Error: ${message}`);
    expect(await (await connectClient(queue)).listRuns()).toEqual([]);
  });

  it('--gpus auto uses nvidia-smi, limited by CUDA_VISIBLE_DEVICES; none found means none', async () => {
    const box = fakeGpuBox({ gpus: [a100('GPU-aaa'), a100('GPU-bbb'), a100('GPU-ccc')] });
    const run = async (env: Record<string, string>) => {
      const result = await fitq(['worker', '--gpus', 'auto', '--run-once', '--log-format', 'json'], { queue: newQueue(), env });
      expect(result.exitCode, result.stderr).toBe(0);
      return parseJsonLog(result.stdout).map((entry) => String(entry.msg));
    };
    const probed = (devices: string) => `GPU devices: ${devices} (probed every 5 s through nvidia-smi)`;
    const all = await run(box.env);
    // Its capacity: the devices, and their memory all told (3 x 40,960 MiB, in whole MB).
    expect(all).toEqual(expect.arrayContaining(['Worker resources: gpu=3 gpumem=128.849G', probed('0,1,2')]));
    // Every device free of processes fitq did not start: none is reported busy or lost.
    expect(all.filter((message) => message.startsWith('GPU ') && message !== probed('0,1,2'))).toEqual([]);
    expect(await run({ ...box.env, CUDA_VISIBLE_DEVICES: '2,GPU-aaa' })).toEqual(
      expect.arrayContaining(['Worker resources: gpu=2 gpumem=85.899G', probed('0,2')]),
    );
    // A PATH with node and sh only: no nvidia-smi, even on a machine with GPUs.
    const bare = mkdtempSync(join(tmpdir(), 'fitq-bare-path-'));
    symlinkSync(process.execPath, join(bare, 'node'));
    symlinkSync('/bin/sh', join(bare, 'sh'));
    expect(await run({ PATH: bare })).toContain('Worker resources: (none)');
  });

  it('says why --gpus auto found no devices: nvidia-smi missing or failing, or every device hidden', async () => {
    const run = async (env: Record<string, string>) => {
      const result = await fitq(['worker', '--gpus', 'auto', '--run-once', '--log-format', 'json'], { queue: newQueue(), env });
      expect(result.exitCode, result.stderr).toBe(0);
      const logs = parseJsonLog(result.stdout);
      expect(logs.map((entry) => String(entry.msg))).toContain('Worker resources: (none)');
      return logs.filter((entry) => entry.level === 40).map((entry) => String(entry.msg));
    };
    const bare = mkdtempSync(join(tmpdir(), 'fitq-bare-path-'));
    symlinkSync(process.execPath, join(bare, 'node'));
    symlinkSync('/bin/sh', join(bare, 'sh'));
    expect(await run({ PATH: bare })).toEqual(['--gpus auto found no GPU devices: no GPU tool on PATH (nvidia-smi, amd-smi, rocm-smi)']);

    const broken = mkdtempSync(join(tmpdir(), 'fitq-broken-smi-'));
    writeFileSync(join(broken, 'nvidia-smi'), '#!/bin/sh\necho "Segmentation fault"\nexit 139\n');
    chmodSync(join(broken, 'nvidia-smi'), 0o755);
    expect(await run({ PATH: `${broken}:${bare}` })).toEqual(['--gpus auto found no GPU devices: nvidia-smi failed: Segmentation fault (exit code 139)']);

    const fake = mkdtempSync(join(tmpdir(), 'fitq-fake-smi-'));
    writeFileSync(join(fake, 'nvidia-smi'), '#!/bin/sh\necho "GPU 0: Fake A100 (UUID: GPU-aaa)"\n');
    chmodSync(join(fake, 'nvidia-smi'), 0o755);
    expect(await run({ PATH: `${fake}:${bare}`, CUDA_VISIBLE_DEVICES: '3,GPU-zzz' })).toEqual([
      "--gpus auto found no GPU devices: CUDA_VISIBLE_DEVICES='3,GPU-zzz' hides every device",
    ]);
  });

  it('refuses --gpus auto when nvidia-smi says the driver cannot be used, rather than start without GPUs', async () => {
    const fakeGpu = `${FIXTURES}fake-gpu`;
    const cases: [string, string][] = [
      ['not-loaded', "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running. (exit code 9)"],
      ['mismatch', 'Failed to initialize NVML: Driver/library version mismatch (exit code 18)'],
    ];
    for (const [failure, said] of cases) {
      const state = join(mkdtempSync(join(tmpdir(), 'fitq-driver-')), 'state.json');
      writeFileSync(state, JSON.stringify({ failure, gpus: [{ name: 'NVIDIA A100-SXM4-40GB', uuid: 'GPU-aaa', memoryTotalMiB: 40960, memoryUsedMiB: 0 }] }));
      const queue = newQueue();
      const result = await fitq(['worker', '--gpus', 'auto', '--run-once'], { queue, env: { PATH: `${fakeGpu}:${process.env.PATH}`, FAKE_GPU_STATE: state } });
      expect(result).toMatchObject({
        exitCode: 1,
        stderr: `Error: --gpus auto: nvidia-smi failed: ${said}; mend the driver, or start the worker with --gpus none or a list of devices`,
      });
      expect(await (await connectClient(queue)).listWorkers()).toEqual([]);
    }
  });

  it('a worker with devices (or any capacity) has no run-count limit by default, so no device waits for a run slot', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await startTestWorker(queue, { name: 'fourgpus', gpus: '0,1,2,3', concurrency: undefined });
    await startTestWorker(queue, { name: 'cpubox', resources: 'cpu=1', concurrency: undefined });
    const limits = Object.fromEntries((await client.listWorkers()).map((worker) => [worker.name, worker.concurrency]));
    // Capacity limits the runs that demand it (runs that demand nothing: the CPU cores, in the claim).
    expect(limits).toEqual({ fourgpus: 0, cpubox: 0 });
    // Four one-GPU runs that each end only once all four have started: they run side by side.
    const dir = mkdtempSync(join(tmpdir(), 'fitq-side-by-side-'));
    const script = 'touch "$0/$FITQ_RUN_ID"; i=0; while [ "$(ls "$0" | wc -l)" -lt 4 ]; do i=$((i+1)); [ $i -gt 600 ] && exit 1; sleep 0.05; done';
    const { runs } = await client.stage({ command: ['sh', '-c', script, dir], resources: 'gpu=1', repeat: 4 });
    const ended = await Promise.all(runs.map((run) => client.waitForEnd(run.id, 60_000)));
    expect(ended.map((run) => [run.status, run.worker])).toEqual(Array.from({ length: 4 }, () => ['completed', 'fourgpus']));
    expect(ended.flatMap((run) => run.devices ?? []).sort()).toEqual([0, 1, 2, 3]);
  });

  it.each([
    ['pack', [[0], [0], [1]]],
    ['spread', [[0], [1], [2]]],
  ])('fitq worker --gpu-placement %s: fractional runs on the fullest or the emptiest device, whole runs on free ones', async (mode, expected) => {
    const queue = newQueue();
    const client = await connectClient(queue);
    // Staged in this order and all claimed at once: half, half, whole.
    const halves = await stageGpuRuns(client, '0.5', 1, 2);
    const [whole] = await stageGpuRuns(client, '1', 1, 1);
    const args = ['worker', '--gpus', '0,1,2,3', '--gpu-placement', mode, '--concurrency', '0', '--run-once', '--log-format', 'json'];
    const result = await fitq(args, { queue });
    expect(result.exitCode, result.stderr).toBe(0);
    const runs = await deviceRuns(client, [...halves, whole!]);
    checkDevices(runs);
    expect(runs.map((run) => run.devices.map(Number))).toEqual(expected);
    // The halves really ran at the same time (placed side by side, not one after the other).
    expect(Math.max(runs[0]!.start, runs[1]!.start)).toBeLessThan(Math.min(runs[0]!.end, runs[1]!.end));
  });

  it('records the placement mode with the worker; pack by default', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await startTestWorker(queue, { name: 'packer', gpus: '0,1' });
    await startTestWorker(queue, { name: 'spreader', gpus: '0,1', gpuPlacement: 'spread' });
    const workers = await client.listWorkers();
    expect(workers.map((worker) => [worker.name, worker.gpuPlacement]).sort()).toEqual([['packer', 'pack'], ['spreader', 'spread']]);
    expect(await client.redis.hget(client.keys.worker('spreader').info, 'gpuPlacement')).toBe('spread');
    await expect(startTestWorker(queue, { gpus: '0,1', gpuPlacement: 'tight' as 'pack' })).rejects.toThrow(
      "expected --gpu-placement to be pack or spread, got 'tight'",
    );
  });

  it.each([
    [['--gpus', 'a,b'], "invalid --gpus 'a,b': expected auto, none, UUIDs (GPU-…, MIG-…) or device indices like 0,1,3 (0 to 1023)"],
    [['--gpus', '0,0'], "invalid --gpus '0,0': a device is listed twice"],
    [['--gpus', '0,1', '-r', 'gpu=3'], '--gpus lists 2 devices but the resources say gpu=3: give one or the other'],
    [['--gpus', '0,1', '--gpu-placement', 'tight'], 'Expected --gpu-placement=tight to be one of: pack, spread'],
  ])('refuses fitq worker %j', async (args, message) => {
    const result = await fitq(['worker', '--run-once', ...args], { queue: newQueue() });
    expect(result.exitCode).toBe(2);
    expect(result.stderr.trim()).toBe(`Error: ${message}`);
  });
});
