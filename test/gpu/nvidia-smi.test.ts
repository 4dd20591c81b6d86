/**
 * Reading nvidia-smi: lines the real tool printed (quoted from its users'
 * reports, driver versions named), and the stand-in the GPU tests put on
 * PATH (test/fixtures/fake-gpu/nvidia-smi), run as a process from a state
 * file, read by the same code.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import {
  COMPUTE_APPS_QUERY,
  GPU_QUERY,
  nvidiaSmiFailure,
  parseComputeApps,
  parseGpuList,
  parseGpuQuery,
  placeholderOf,
} from '../../src/gpu/nvidia-smi.js';

const FAKE = fileURLToPath(new URL('../fixtures/fake-gpu/nvidia-smi', import.meta.url));

async function fake(state: object, args: string[]): Promise<{ exitCode: number | undefined; stdout: string }> {
  const file = join(mkdtempSync(join(tmpdir(), 'fitq-fake-gpu-')), 'state.json');
  writeFileSync(file, JSON.stringify(state));
  const result = await execa(FAKE, args, { env: { FAKE_GPU_STATE: file }, reject: false, stripFinalNewline: false });
  return { exitCode: result.exitCode, stdout: String(result.stdout) };
}

const A100 = { name: 'NVIDIA A100-SXM4-40GB', uuid: 'GPU-6109dd5c-d378-24ee-f344-79b537574ea6', memoryTotalMiB: 40960, memoryUsedMiB: 26 };
const H100 = { name: 'NVIDIA H100 80GB HBM3', uuid: 'GPU-4e9e74b7-4977-f04d-3af3-ccfe5f570e90', memoryTotalMiB: 81559, memoryUsedMiB: 21804, utilization: 37 };
const MIG = [
  { profile: '1g.5gb', uuid: 'MIG-8c4c5a27-e508-5556-b2ea-7e549465741e', gi: 7 },
  { profile: '3g.20gb', uuid: 'MIG-1d2e3f40-e508-5556-b2ea-7e549465741f', gi: 2 },
];
const GPU_ARGS = [`--query-gpu=${GPU_QUERY.join(',')}`, '--format=csv,noheader,nounits'];
const APPS_ARGS = [`--query-compute-apps=${COMPUTE_APPS_QUERY.join(',')}`, '--format=csv,noheader,nounits'];

describe('nvidia-smi as its users saw it', () => {
  it('lists GPUs and their MIG devices in the R470+ form and the older one', () => {
    // R470+ (nomad-device-nvidia#53), and R460 (gpu-operator's MIG docs, driver 460.73.01).
    const r470 = [
      'GPU 5: NVIDIA A100-SXM4-40GB (UUID: GPU-6109dd5c-d378-24ee-f344-79b537574ea6)',
      '  MIG 1g.5gb      Device  0: (UUID: MIG-8c4c5a27-e508-5556-b2ea-7e549465741e)',
      '  MIG 1g.10gb     Device  1: (UUID: MIG-1d2e3f40-e508-5556-b2ea-7e549465741f)',
      '',
    ].join('\n');
    expect(parseGpuList(r470)).toEqual([
      {
        index: 5, name: 'NVIDIA A100-SXM4-40GB', uuid: 'GPU-6109dd5c-d378-24ee-f344-79b537574ea6',
        mig: [
          { profile: '1g.5gb', index: 0, uuid: 'MIG-8c4c5a27-e508-5556-b2ea-7e549465741e' },
          { profile: '1g.10gb', index: 1, uuid: 'MIG-1d2e3f40-e508-5556-b2ea-7e549465741f' },
        ],
      },
    ]);
    const r460 = 'GPU 0: A100-SXM4-40GB (UUID: GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f)\n  MIG 1g.5gb Device 0: (UUID: MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/7/0)\n';
    expect(parseGpuList(r460)[0]!.mig).toEqual([{ profile: '1g.5gb', index: 0, uuid: 'MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/7/0' }]);
  });

  it('reads placeholders as unread measures, with what they said', () => {
    // A MIG-enabled A100 seen from an unprivileged pod (driver 535.161.08, StableSwarmUI#388).
    const [reading] = parseGpuQuery('0, GPU-6109dd5c-d378-24ee-f344-79b537574ea6, NVIDIA A100-SXM4-80GB, 00000000:07:00.0, [Insufficient Permissions], [Insufficient Permissions], [N/A]\n');
    expect(reading).toEqual({
      index: 0, uuid: 'GPU-6109dd5c-d378-24ee-f344-79b537574ea6', name: 'NVIDIA A100-SXM4-80GB', busId: '0000:07:00.0',
      memoryTotalMiB: undefined, memoryUsedMiB: undefined, utilizationPercent: undefined,
      unread: { 'memory.total': 'Insufficient Permissions', 'memory.used': 'Insufficient Permissions', 'utilization.gpu': 'N/A' },
    });
    expect(['[N/A]', '[Not Supported]', '[Unknown Error]', '[GPU requires reset]', '40960', 'N/A'].map(placeholderOf)).toEqual([
      'N/A', 'Not Supported', 'Unknown Error', 'GPU requires reset', undefined, undefined,
    ]);
  });

  it('reads compute processes, a process name with commas whole, and processes it could not see', () => {
    const apps = parseComputeApps(
      [
        'GPU-4e9e74b7-4977-f04d-3af3-ccfe5f570e90, 1425258, 105842, python3',
        'GPU-4e9e74b7-4977-f04d-3af3-ccfe5f570e90, 2151955, [N/A], [Not Found]',
        'GPU-4e9e74b7-4977-f04d-3af3-ccfe5f570e90, 3032, 300, /opt/chrome --type=gpu-process, --field-trial-handle=1,2',
        '',
      ].join('\n'),
    );
    expect(apps).toEqual([
      { gpuUuid: 'GPU-4e9e74b7-4977-f04d-3af3-ccfe5f570e90', pid: 1425258, usedMiB: 105842, processName: 'python3' },
      { gpuUuid: 'GPU-4e9e74b7-4977-f04d-3af3-ccfe5f570e90', pid: 2151955, usedMiB: undefined, processName: '[Not Found]' },
      { gpuUuid: 'GPU-4e9e74b7-4977-f04d-3af3-ccfe5f570e90', pid: 3032, usedMiB: 300, processName: '/opt/chrome --type=gpu-process, --field-trial-handle=1,2' },
    ]);
    expect(parseComputeApps('')).toEqual([]);
  });

  it('tells a driver it cannot use from a device fallen off the bus', () => {
    expect(nvidiaSmiFailure(9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n")).toMatchObject({ kind: 'driver' });
    expect(nvidiaSmiFailure(18, 'Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.161\n')).toEqual({
      kind: 'driver', message: 'Failed to initialize NVML: Driver/library version mismatch NVML library version: 535.161',
    });
    // With and without the space after "GPU" (R525 and later drop it).
    expect(nvidiaSmiFailure(15, 'Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost.  Reboot the system to recover this GPU\n')).toMatchObject({
      kind: 'lost', busIds: ['0000:02:00.0'],
    });
    expect(nvidiaSmiFailure(255, 'Unable to determine the device handle for GPU0000:17:00.0: Unknown Error\n')).toMatchObject({ kind: 'lost', busIds: ['0000:17:00.0'] });
    expect(nvidiaSmiFailure(2, 'Field "bogus" is not a valid field to query.\n')).toMatchObject({ kind: 'other' });
  });
});

describe('the stand-in nvidia-smi, read as the real one', () => {
  it('lists devices, MIG slices in the form of the driver it imitates', async () => {
    const state = { gpus: [H100, { ...A100, mig: MIG }] };
    const listed = await fake(state, ['-L']);
    expect(listed).toEqual({
      exitCode: 0,
      stdout: [
        'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-4e9e74b7-4977-f04d-3af3-ccfe5f570e90)',
        'GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-6109dd5c-d378-24ee-f344-79b537574ea6)',
        '  MIG 1g.5gb      Device  0: (UUID: MIG-8c4c5a27-e508-5556-b2ea-7e549465741e)',
        '  MIG 3g.20gb     Device  1: (UUID: MIG-1d2e3f40-e508-5556-b2ea-7e549465741f)',
        '',
      ].join('\n'),
    });
    expect(parseGpuList(listed.stdout).map((gpu) => gpu.mig.map((slice) => slice.uuid))).toEqual([[], MIG.map((slice) => slice.uuid)]);
    const old = await fake({ ...state, driver: '460.73.01' }, ['-L']);
    expect(parseGpuList(old.stdout)[1]!.mig.map((slice) => slice.uuid)).toEqual([`MIG-${A100.uuid}/7/0`, `MIG-${A100.uuid}/2/0`]);
  });

  it('answers the probe queries with headers and units as asked, and MIG devices without utilization', async () => {
    const state = { gpus: [H100, { ...A100, mig: MIG }], processes: [{ gpu: 0, pid: 4242, usedMiB: 21800, name: 'python' }] };
    const headed = await fake(state, [GPU_ARGS[0]!, '--format=csv']);
    expect(headed.stdout.split('\n')[0]).toBe('index, uuid, name, pci.bus_id, memory.total [MiB], memory.used [MiB], utilization.gpu [%]');
    expect(headed.stdout.split('\n')[1]).toBe('0, GPU-4e9e74b7-4977-f04d-3af3-ccfe5f570e90, NVIDIA H100 80GB HBM3, 00000000:3B:00.0, 81559 MiB, 21804 MiB, 37 %');
    const readings = parseGpuQuery((await fake(state, GPU_ARGS)).stdout);
    expect(readings).toEqual(parseGpuQuery(headed.stdout));
    expect(readings.map((gpu) => gpu.busId)).toEqual(['0000:3b:00.0', '0000:3c:00.0']);
    expect(readings.map((gpu) => [gpu.index, gpu.memoryTotalMiB, gpu.memoryUsedMiB, gpu.utilizationPercent, gpu.unread])).toEqual([
      [0, 81559, 21804, 37, {}],
      [1, 40960, 26, undefined, { 'utilization.gpu': 'N/A' }],
    ]);
    const apps = await fake(state, APPS_ARGS);
    expect(parseComputeApps(apps.stdout)).toEqual([{ gpuUuid: H100.uuid, pid: 4242, usedMiB: 21800, processName: 'python' }]);
    expect((await fake({ ...state, processes: [] }, APPS_ARGS)).stdout).toBe('');
    expect((await fake({ ...state, processes: [] }, [APPS_ARGS[0]!, '--format=csv'])).stdout).toBe('gpu_uuid, pid, used_gpu_memory [MiB], process_name\n');
  });

  it('fails as the real tool does: the driver, a lost device, a bad field', async () => {
    const cases: [object, string[], number, string][] = [
      [{ failure: 'not-loaded', gpus: [H100] }, ['-L'], 9, 'driver'],
      [{ failure: 'nvml-missing', gpus: [H100] }, GPU_ARGS, 12, 'driver'],
      [{ failure: 'mismatch', gpus: [H100] }, GPU_ARGS, 18, 'driver'],
      [{ gpus: [H100, { ...A100, lost: true }] }, GPU_ARGS, 15, 'lost'],
      [{ gpus: [H100] }, ['--query-gpu=bogus', '--format=csv'], 2, 'other'],
    ];
    for (const [state, args, exitCode, kind] of cases) {
      const result = await fake(state, args);
      expect(result.exitCode, result.stdout).toBe(exitCode);
      expect(nvidiaSmiFailure(result.exitCode, result.stdout).kind, result.stdout).toBe(kind);
    }
    const lost = await fake({ gpus: [H100, { ...A100, lost: true }] }, GPU_ARGS);
    expect(lost.stdout).toBe('Unable to determine the device handle for GPU0000:3C:00.0: GPU is lost.  Reboot the system to recover this GPU\n');
    expect(nvidiaSmiFailure(lost.exitCode, lost.stdout)).toMatchObject({ busIds: ['0000:3c:00.0'] });
  });
});
