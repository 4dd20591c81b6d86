/**
 * `--gpus auto` on an AMD box (no nvidia-smi; the stand-in amd-smi or
 * rocm-smi on PATH), through a real CLI worker and real runs: the devices
 * the tool lists, each run given ROCR_VISIBLE_DEVICES alone (never a HIP or
 * CUDA list that would hide its device), and a missing driver refused.
 */
import { mkdtempSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, FIXTURES, fitq, newQueue } from '../support/fitq.js';

const MI210 = { name: 'AMD Instinct MI210', uuid: 'GPU-a', memoryTotalMiB: 65520, memoryUsedMiB: 10 };

/** A PATH with node, sh and only the named stand-ins, and a state file for them. */
function amdBox(tools: ('amd-smi' | 'rocm-smi')[], state: object): Record<string, string> {
  const bin = mkdtempSync(join(tmpdir(), 'fitq-amd-box-'));
  symlinkSync(process.execPath, join(bin, 'node'));
  symlinkSync('/bin/sh', join(bin, 'sh'));
  for (const tool of tools) symlinkSync(`${FIXTURES}fake-gpu/${tool}`, join(bin, tool));
  const file = join(bin, 'state.json');
  writeFileSync(file, JSON.stringify(state));
  return { PATH: bin, FAKE_GPU_STATE: file };
}

const PRINT = ['sh', '-c', 'echo "rocr=$ROCR_VISIBLE_DEVICES hip=${HIP_VISIBLE_DEVICES-unset} cuda=${CUDA_VISIBLE_DEVICES-unset}"'];

describe('AMD devices', () => {
  it.each([['amd-smi'], ['rocm-smi']] as const)('finds them with %s and gives each run ROCR_VISIBLE_DEVICES alone', async (tool) => {
    const queue = newQueue();
    const env = amdBox([tool], { vendor: 'amd', gpus: [MI210, { ...MI210, uuid: 'GPU-b' }] });
    // A HIP list in the worker's own environment would renumber the run's device: it is not passed on.
    const worker = spawnCliWorker(queue, ['--gpus', 'auto'], undefined, { ...env, HIP_VISIBLE_DEVICES: '1' });
    // amd-smi probes them; rocm-smi (older ROCm) lists them only.
    await worker.waitForMessage(tool === 'amd-smi'
      ? 'GPU devices: 0,1 (AMD, runs get ROCR_VISIBLE_DEVICES; probed every 5 s through amd-smi)'
      : "GPU devices: 0,1 (AMD, runs get ROCR_VISIBLE_DEVICES; not probed: amd-smi not found on PATH; a device is free when fitq's own runs leave it)");
    const client = await connectClient(queue);
    const { runs } = await client.stage([{ command: PRINT, resources: 'gpu=1' }, { command: PRINT, resources: 'gpu=1' }]);
    const printed = await Promise.all(runs.map(async ({ id }) => {
      expect((await client.waitForEnd(id)).status).toBe('completed');
      return (await client.readLog(id)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []))[0];
    }));
    expect(printed.sort()).toEqual(['rocr=0 hip=unset cuda=unset', 'rocr=1 hip=unset cuda=unset']);
  });

  it('probed through amd-smi: a device a process fitq did not start holds takes no run until it leaves; gpumem is its VRAM', async () => {
    const queue = newQueue();
    const env = amdBox(['amd-smi'], {
      vendor: 'amd',
      gpus: [{ ...MI210, memoryUsedMiB: 20010 }, { ...MI210, uuid: 'GPU-b' }],
      processes: [{ gpu: 0, pid: 4242, usedMiB: 20000, name: 'python3' }],
    });
    const worker = spawnCliWorker(queue, ['--gpus', 'auto', '--gpu-probe-interval', '1s', '--name', 'mi'], undefined, env);
    await worker.waitForMessage('GPU 0 is busy: used by a process fitq did not start (pid 4242, python3, 19.5 GiB); no run is placed on it until that changes');
    // Its capacity gpumem is the devices' VRAM as amd-smi gives it (2 × 65,520 MiB), in whole megabytes.
    await worker.waitForMessage(/^Worker resources: gpu=2 gpumem=137\.405G$/);
    const client = await connectClient(queue);
    const { runs: [first, second] } = await client.stage([{ command: PRINT, resources: 'gpu=1' }, { command: PRINT, resources: 'gpu=1 gpumem=60G' }]);
    expect((await client.waitForEnd(first!.id)).status).toBe('completed');
    expect((await client.readLog(first!.id)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []))).toEqual(['rocr=1 hip=unset cuda=unset']);
    const state = JSON.parse(readFileSync(env.FAKE_GPU_STATE!, 'utf8')) as { processes: unknown[]; gpus: { memoryUsedMiB: number }[] };
    state.processes = [];
    state.gpus[0]!.memoryUsedMiB = 10;
    writeFileSync(`${env.FAKE_GPU_STATE}.new`, JSON.stringify(state));
    renameSync(`${env.FAKE_GPU_STATE}.new`, env.FAKE_GPU_STATE!);
    await worker.waitForMessage('GPU 0 is usable again');
    expect((await client.waitForEnd(second!.id)).status).toBe('completed');
  });

  it('refuses --gpus auto when the amdgpu driver is not loaded', async () => {
    const env = amdBox(['amd-smi'], { vendor: 'amd', failure: 'not-loaded', gpus: [MI210] });
    const result = await fitq(['worker', '--gpus', 'auto', '--run-once'], { queue: newQueue(), env });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/^Error: --gpus auto: amd-smi failed: .*; mend the driver, or start the worker with --gpus none or a list of devices$/);
  });
});
