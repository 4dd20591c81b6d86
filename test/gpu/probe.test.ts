/**
 * A probe of the worker's devices through the stand-in nvidia-smi (first on
 * PATH): foreign processes told from the worker's own runs by the run token
 * in their environment (a real process here, started with one), the ignore
 * list by name and pid, the driver's memory on an idle device, and failures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { describeForeign, probeNvidia, type IgnoredProcesses } from '../../src/gpu/probe.js';
import { readRunToken, RUN_TOKEN_VARIABLE } from '../../src/worker/escaped-sweep.js';

const FAKE_DIR = dirname(fileURLToPath(new URL('../fixtures/fake-gpu/nvidia-smi', import.meta.url)));
const H100 = { name: 'NVIDIA H100 80GB HBM3', uuid: 'GPU-4e9e74b7-4977-f04d-3af3-ccfe5f570e90', memoryTotalMiB: 81559, memoryUsedMiB: 21804 };
const A100 = { name: 'NVIDIA A100-SXM4-40GB', uuid: 'GPU-6109dd5c-d378-24ee-f344-79b537574ea6', memoryTotalMiB: 40960, memoryUsedMiB: 412 };
const NONE: IgnoredProcesses = { names: new Set(), pids: new Set() };

const children: ChildProcess[] = [];
afterEach(() => children.splice(0).forEach((child) => child.kill('SIGKILL')));

/** A live process with this run token in its environment (as a run's processes have). */
function runProcess(token: string): number {
  const child = spawn('sleep', ['60'], { env: { ...process.env, [RUN_TOKEN_VARIABLE]: token }, stdio: 'ignore' });
  children.push(child);
  return child.pid!;
}

function env(state: object): NodeJS.ProcessEnv {
  const file = join(mkdtempSync(join(tmpdir(), 'fitq-probe-')), 'state.json');
  writeFileSync(file, JSON.stringify(state));
  return { ...process.env, PATH: `${FAKE_DIR}:${process.env.PATH}`, FAKE_GPU_STATE: file };
}

/** A worker's runs by their tokens: the run a process belongs to, if its environment holds one of them. */
const ownBy = (tokens: Record<string, string>) => async (pid: number) => {
  const token = await readRunToken(pid);
  return token === undefined ? undefined : tokens[token];
};

describe('probing devices through nvidia-smi', () => {
  it('finds the processes fitq did not start, not its runs, not the driver, not those ignored', async () => {
    const own = runProcess('tok-own');
    const other = runProcess('tok-of-another-worker');
    const state = {
      gpus: [H100, A100],
      processes: [
        { gpu: 0, pid: 4242, usedMiB: 21800, name: '/usr/bin/python3' },
        { gpu: 0, pid: own, usedMiB: 4, name: 'train' },
        { gpu: 1, pid: other, usedMiB: 300, name: 'eval' },
        { gpu: 1, pid: 5151, usedMiB: 100, name: 'Xorg' },
      ],
    };
    const result = await probeNvidia({ ownerOf: ownBy({ 'tok-own': 'r1' }), ignored: { names: new Set(['Xorg']), pids: new Set() }, env: env(state) });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.devices.map((device) => [device.index, device.totalMiB, device.usedMiB, device.foreign])).toEqual([
      [0, 81559, 21804, [{ pid: 4242, name: '/usr/bin/python3', usedMiB: 21800 }]],
      [1, 40960, 412, [{ pid: other, name: 'eval', usedMiB: 300 }]],
    ]);
    // What the worker's own run uses of the device, by run.
    expect(result.devices.map((device) => device.own)).toEqual([{ r1: 4 }, {}]);
    expect(describeForeign(result.devices[0]!.foreign)).toBe('used by a process fitq did not start (pid 4242, python3, 21.3 GiB)');
    // Ignored by pid too; an idle device with the driver's reserved memory has no foreign process.
    const idle = await probeNvidia({ ownerOf: ownBy({}), ignored: { names: new Set(), pids: new Set([4242]) }, env: env({ gpus: [H100], processes: [{ gpu: 0, pid: 4242, usedMiB: 9, name: 'python' }] }) });
    expect(idle.ok && idle.devices[0]!.foreign).toEqual([]);
  });

  it('says whether the driver or a device failed', async () => {
    expect(await probeNvidia({ ownerOf: ownBy({}), ignored: NONE, env: env({ failure: 'not-loaded', gpus: [H100] }) })).toMatchObject({
      ok: false,
      failure: { kind: 'driver', message: expect.stringMatching(/^NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver/) },
    });
    expect(await probeNvidia({ ownerOf: ownBy({}), ignored: NONE, env: env({ gpus: [H100, { ...A100, lost: true }] }) })).toMatchObject({
      ok: false,
      failure: { kind: 'lost', busIds: ['0000:3c:00.0'] },
    });
    // Asked about the worker's devices one by one, the lost one is listed as lost and the other reads.
    const each = await probeNvidia({ ownerOf: ownBy({}), ignored: NONE, devices: [0, 1], env: env({ gpus: [H100, { ...A100, lost: true }] }) });
    expect(each.ok && each.devices.map((device) => [device.index, device.totalMiB])).toEqual([[0, 81559]]);
    expect(each.ok && each.lost).toEqual([{ index: 1, message: expect.stringMatching(/^Unable to determine the device handle for GPU0000:3C:00.0: GPU is lost/) }]);
  });
});
