/**
 * Reading AMD's tools: answers in the forms rocm-smi and amd-smi printed
 * them (each sample says which version it imitates; the values are made
 * up), and the stand-ins the GPU tests put on PATH
 * (test/fixtures/fake-gpu/rocm-smi and amd-smi), run as processes from a
 * state file, for each format generation, read by the same code.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import {
  AMD_SMI_LIST_ARGS,
  AMD_SMI_LIST_ENUMERATION_ARGS,
  AMD_SMI_METRIC_ARGS,
  AMD_SMI_PROCESS_ARGS,
  amdSmiFailure,
  parseAmdSmiList,
  parseAmdSmiMetric,
  parseAmdSmiProcesses,
} from '../../src/gpu/amd-smi.js';
import { parseRocmSmi, parseRocmSmiPids, ROCM_SMI_ARGS, ROCM_SMI_PIDS_ARGS, rocmSmiFailure } from '../../src/gpu/rocm-smi.js';

const FAKES = fileURLToPath(new URL('../fixtures/fake-gpu/', import.meta.url));
const MiB = 1024 * 1024;

async function fake(tool: 'rocm-smi' | 'amd-smi', state: object, args: readonly string[]) {
  const file = join(mkdtempSync(join(tmpdir(), 'fitq-fake-amd-')), 'state.json');
  writeFileSync(file, JSON.stringify(state));
  const result = await execa(join(FAKES, tool), args, { env: { FAKE_GPU_STATE: file }, reject: false, stripFinalNewline: false });
  return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
}

const W7900 = { uuid: '1dff7448-0000-1000-8043-9c5e2b7a1f02', uniqueId: '0x4c1d9e2f77a0b311', bdf: '0000:03:00.0', memoryTotalMiB: 46064, memoryUsedMiB: 812, utilization: 37 };
const MI210 = { uuid: '7eff740f-0000-1000-80b1-42d9a0c3e5f7', uniqueId: '0xa07c33e18d5b2f64', bdf: '0000:43:00.0', memoryTotalMiB: 65520, memoryUsedMiB: 10, utilization: 0 };
const AMD = { vendor: 'amd', gpus: [W7900, MI210], processes: [{ gpu: 0, pid: 4242, usedMiB: 700, name: '/usr/bin/python3' }] };

describe('rocm-smi as it prints', () => {
  it('reads each card, and what it could not give', () => {
    // ROCm 6.x: json.dumps on one line; an APU's card has no unique id and no busy percent (dropped, not N/A).
    const answer =
      '{"card0": {"Unique ID": "0x4c1d9e2f77a0b311", "GPU use (%)": "37", "VRAM Total Memory (B)": "48301604864", "VRAM Total Used Memory (B)": "851443712"}, ' +
      '"card1": {"Unique ID": "N/A", "VRAM Total Memory (B)": "536870912", "VRAM Total Used Memory (B)": "31457280"}}\n';
    expect(parseRocmSmi(answer)).toEqual([
      { index: 0, uuid: '0x4c1d9e2f77a0b311', totalBytes: 48301604864, usedBytes: 851443712, utilization: 37, unread: {} },
      { index: 1, uuid: '', totalBytes: 536870912, usedBytes: 31457280, utilization: undefined, unread: { 'Unique ID': 'N/A', 'GPU use (%)': 'not reported' } },
    ]);
    // The same, reformatted as users paste it (jq), with ROCm 5.0–5.2's extra "GFX Activity": "N/A" and a "system" key.
    const pretty = JSON.stringify({ system: { 'Driver version': '6.3.6' }, card0: { 'Unique ID': '0x4c1d9e2f77a0b311', 'GPU use (%)': '37', 'GFX Activity': 'N/A', 'VRAM Total Memory (B)': '48301604864', 'VRAM Total Used Memory (B)': '851443712' } }, null, 2);
    expect(parseRocmSmi(pretty)).toEqual(parseRocmSmi(answer).slice(0, 1));
    // No card with data: rocm-smi prints nothing (and "WARNING: No JSON data to report" on stderr).
    expect(parseRocmSmi('')).toEqual([]);
  });

  it('says what it printed when it is not JSON', () => {
    // rocm-smi prints this on stdout when its library is missing, --json or not, and exits 0.
    const text = 'Unable to load the rocm_smi library.\nSet LD_LIBRARY_PATH to the folder containing librocm_smi64.so.7\n';
    expect(() => parseRocmSmi(text)).toThrow("rocm-smi did not answer JSON: 'Unable to load the rocm_smi library. Set LD_LIBRARY_PATH");
    // Quoted as fitq quotes every value (src/text/quote.ts): cut short.
    expect(() => parseRocmSmi(`${'x'.repeat(500)}`)).toThrow(/'x{200}…' \(500 characters\)$/);
    expect(() => parseRocmSmi('[1, 2]')).toThrow(/not an object keyed by card: '\[1, 2\]'/);
    expect(rocmSmiFailure(0, text)).toMatchObject({ kind: 'driver' });
  });

  it('reads --showpids: a GPU count, VRAM over all GPUs, and names split on spaces', () => {
    // ROCm 5.7–6.x summary rows (lower-cased by rocm-smi; CU occupancy "unknown" where the kernel has none).
    const answer = '{"system": {"PID4242": "python3, 1, 734003200, 0, unknown", "PID77": "my, server, 2, 4096, 0, 0", "PID5": "unknown, 1, unknown, unknown, unknown"}}\n';
    expect(parseRocmSmiPids(answer)).toEqual([
      { pid: 4242, name: 'python3', gpuCount: 1, usedBytes: 734003200 },
      { pid: 77, name: 'my server', gpuCount: 2, usedBytes: 4096 },
      { pid: 5, name: 'unknown', gpuCount: 1, usedBytes: undefined },
    ]);
    expect(parseRocmSmiPids('')).toEqual([]);
    expect(parseRocmSmiPids('{"card0": {"Unique ID": "N/A"}}')).toEqual([]);
  });

  it('tells a missing driver (exit 0) from other failures', () => {
    expect(rocmSmiFailure(0, 'cat: /sys/module/amdgpu/initstate: No such file or directory\nERROR:root:Driver not initialized (amdgpu not found in modules)\n')).toEqual({
      kind: 'driver',
      message: 'cat: /sys/module/amdgpu/initstate: No such file or directory ERROR:root:Driver not initialized (amdgpu not found in modules)',
    });
    expect(rocmSmiFailure(0, 'WARNING: No JSON data to report\n')).toBeUndefined();
    expect(rocmSmiFailure(2, 'rocm-smi: error: unrecognized arguments: --bogus\n')).toMatchObject({ kind: 'other' });
  });
});

describe('amd-smi as it prints', () => {
  it('lists GPUs: a bare object for one (23.4), a list otherwise, KFD and HIP ids later', () => {
    // amd-smi 23.4.2 (ROCm 6.0), one GPU.
    expect(parseAmdSmiList('{\n    "gpu": 0,\n    "bdf": "0000:03:00.0",\n    "uuid": "1dff7448-0000-1000-8043-9c5e2b7a1f02"\n}\n')).toEqual([
      { index: 0, bdf: '0000:03:00.0', uuid: '1dff7448-0000-1000-8043-9c5e2b7a1f02', unread: {} },
    ]);
    // amd-smi 25.5.1 (ROCm 6.4.2) `list -e`: KFD ids (24.7 and later) and HIP's; a second GPU whose UUID it could not read.
    const listed = JSON.stringify([
      { gpu: 0, bdf: '0000:03:00.0', uuid: '1dff7448-0000-1000-8043-9c5e2b7a1f02', kfd_id: 45412, node_id: 1, partition_id: 0, render: 'renderD128', card: 'card0', hsa_id: 1, hip_id: 0, hip_uuid: 'GPU-4c1d9e2f77a0b311' },
      { gpu: 1, bdf: '0000:43:00.0', uuid: 'N/A', kfd_id: 46412, node_id: 2, partition_id: 0, render: 'renderD136', card: 'card1', hsa_id: 2, hip_id: 1, hip_uuid: 'N/A' },
    ], null, 4);
    expect(parseAmdSmiList(listed)).toEqual([
      { index: 0, bdf: '0000:03:00.0', uuid: '1dff7448-0000-1000-8043-9c5e2b7a1f02', hipId: 0, hipUuid: 'GPU-4c1d9e2f77a0b311', unread: {} },
      { index: 1, bdf: '0000:43:00.0', uuid: '', hipId: 1, unread: { uuid: 'N/A', hip_uuid: 'N/A' } },
    ]);
    expect(parseAmdSmiList('')).toEqual([]);
    // 26.x prints its version record after a failure; it is no GPU.
    expect(parseAmdSmiList('[{"tool": "AMDSMI Tool", "version": "26.1.0+b5522cc8"}]')).toEqual([]);
    expect(() => parseAmdSmiList('AMDSMI Tool: 26.1.0+b5522cc8 | AMDSMI Library version: 26.1.0 | ROCm version: N/A\n')).toThrow(
      "amd-smi list did not answer JSON: 'AMDSMI Tool: 26.1.0+b5522cc8 | AMDSMI Library version: 26.1.0 | ROCm version: N/A'",
    );
    expect(() => parseAmdSmiList('{"cpu_data": []}')).toThrow(/of no form fitq knows/);
  });

  it('reads metric in its three generations, MB as MiB', () => {
    // amd-smi 23.4.2 (ROCm 6.0): bare numbers, `gfx_usage`; one GPU, a bare object.
    expect(parseAmdSmiMetric('{"gpu": 0, "usage": {"gfx_usage": 37, "mem_usage": 2, "mm_ip_usage": "N/A"}, "mem_usage": {"total_vram": 46064, "used_vram": 812, "free_vram": 45252}}')).toEqual([
      { index: 0, totalBytes: 46064 * MiB, usedBytes: 812 * MiB, utilization: 37, unread: {} },
    ]);
    // amd-smi 24.6 (ROCm 6.2): a list, {"value", "unit"}; a GPU whose used VRAM and activity could not be read.
    const listed = JSON.stringify([
      { gpu: 0, usage: { gfx_activity: { value: 37, unit: '%' }, umc_activity: { value: 2, unit: '%' }, mm_activity: 'N/A' }, mem_usage: { total_vram: { value: 46064, unit: 'MB' }, used_vram: { value: 812, unit: 'MB' } } },
      { gpu: 1, usage: { gfx_activity: 'N/A', umc_activity: 'N/A', mm_activity: 'N/A' }, mem_usage: { total_vram: { value: 65520, unit: 'MB' }, used_vram: 'N/A' } },
      { gpu: 2, usage: 'N/A', mem_usage: { used_vram: { value: 1, unit: 'GB' } } },
    ], null, 4);
    expect(parseAmdSmiMetric(listed)).toEqual([
      { index: 0, totalBytes: 46064 * MiB, usedBytes: 812 * MiB, utilization: 37, unread: {} },
      { index: 1, totalBytes: 65520 * MiB, usedBytes: undefined, utilization: undefined, unread: { 'mem_usage.used_vram': 'N/A', 'usage.gfx_activity': 'N/A' } },
      { index: 2, totalBytes: undefined, usedBytes: 1024 * MiB, utilization: undefined, unread: { 'mem_usage.total_vram': 'not reported', usage: 'N/A' } },
    ]);
    // amd-smi 26.x (ROCm 7): the same entries under "gpu_data".
    expect(parseAmdSmiMetric(`{"gpu_data": ${listed}}`)).toEqual(parseAmdSmiMetric(listed));
  });

  it('reads processes in the forms of 23.4, 24.5 and 24.6 and later', () => {
    const info = (pid: number, vram: number, name = 'python3') => ({ name, pid, memory_usage: { gtt_mem: 0, cpu_mem: 0, vram_mem: vram }, mem_usage: vram, usage: { gfx: 0, enc: 0 } });
    // amd-smi 23.4.2 (ROCm 6.0): several processes under "values", none as "Not Found".
    expect(parseAmdSmiProcesses(JSON.stringify([
      { gpu: 0, values: [{ process_info: info(4242, 734003200) }, { process_info: info(4343, 4096, 'N/A') }] },
      { gpu: 1, process_info: 'Not Found' },
    ]))).toEqual([
      { gpuIndex: 0, pid: 4242, name: 'python3', usedBytes: 734003200 },
      { gpuIndex: 0, pid: 4343, name: 'N/A', usedBytes: 4096 },
    ]);
    // amd-smi 24.5.2 (ROCm 6.1.2): one "process_info" per GPU, with units.
    expect(parseAmdSmiProcesses('[{"gpu": 1, "process_info": {"name": "rvs", "pid": 77, "mem_usage": {"value": 2097152, "unit": "B"}}}]')).toEqual([
      { gpuIndex: 1, pid: 77, name: 'rvs', usedBytes: 2097152 },
    ]);
    // amd-smi 24.6 and later (ROCm 6.2–7.x): "process_list".
    expect(parseAmdSmiProcesses(JSON.stringify([
      { gpu: 0, process_list: [{ process_info: { ...info(4242, 0), memory_usage: { vram_mem: { value: 734003200, unit: 'B' } } } }] },
      { gpu: 1, process_list: [{ process_info: 'No running processes detected' }] },
    ]))).toEqual([{ gpuIndex: 0, pid: 4242, name: 'python3', usedBytes: 734003200 }]);
  });

  it('tells a missing driver from no GPU and from other failures', () => {
    expect(amdSmiFailure(255, 'ERROR: Driver not found (amdgpu not found in modules)\n')).toMatchObject({ kind: 'driver' });
    expect(amdSmiFailure(255, [
      'ERROR:root:Unable to get devices, driver not initialized (amdgpu not found in modules)',
      'ERROR:root:Unable to detect any GPU devices, check amdgpu version and module status (sudo modprobe amdgpu)',
    ].join('\n'))).toMatchObject({ kind: 'driver' });
    expect(amdSmiFailure(255, 'ERROR:root:Unable to detect any GPU devices, check amdgpu version and module status\n')).toMatchObject({ kind: 'no-devices' });
    expect(amdSmiFailure(2, 'amd-smi: error: unrecognized arguments: -e\n')).toMatchObject({ kind: 'other' });
    expect(amdSmiFailure(0, '')).toBeUndefined();
  });
});

describe('the stand-in rocm-smi, read as the real one', () => {
  it('answers the probe question byte for byte, in every ROCm generation', async () => {
    const answer = await fake('rocm-smi', { ...AMD, rocm: '6.2.2' }, ROCM_SMI_ARGS);
    expect(answer).toEqual({
      exitCode: 0,
      stderr: '',
      stdout:
        '{"card0": {"Unique ID": "0x4c1d9e2f77a0b311", "GPU use (%)": "37", "VRAM Total Memory (B)": "48301604864", "VRAM Total Used Memory (B)": "851443712"}, ' +
        '"card1": {"Unique ID": "0xa07c33e18d5b2f64", "GPU use (%)": "0", "VRAM Total Memory (B)": "68702699520", "VRAM Total Used Memory (B)": "10485760"}}\n',
    });
    const expected = [
      { index: 0, uuid: W7900.uniqueId, totalBytes: W7900.memoryTotalMiB * MiB, usedBytes: W7900.memoryUsedMiB * MiB, utilization: 37, unread: {} },
      { index: 1, uuid: MI210.uniqueId, totalBytes: MI210.memoryTotalMiB * MiB, usedBytes: MI210.memoryUsedMiB * MiB, utilization: 0, unread: {} },
    ];
    for (const rocm of ['4.5.2', '5.1.0', '6.0.2', '6.4.0']) {
      expect(parseRocmSmi((await fake('rocm-smi', { ...AMD, rocm }, ROCM_SMI_ARGS)).stdout), rocm).toEqual(expected);
    }
    // A device that cannot read its busy percent or used VRAM, or its unique id.
    const partial = await fake('rocm-smi', { vendor: 'amd', gpus: [{ ...MI210, uniqueId: undefined, utilization: 'N/A', memoryUsedMiB: 'N/A' }] }, ROCM_SMI_ARGS);
    expect(partial.stdout).toBe('{"card0": {"Unique ID": "N/A", "VRAM Total Memory (B)": "68702699520"}}\n');
    expect(parseRocmSmi(partial.stdout)[0]!.unread).toEqual({ 'Unique ID': 'N/A', 'VRAM Total Used Memory (B)': 'not reported', 'GPU use (%)': 'not reported' });
    // -d picks cards, which keep their index.
    expect(parseRocmSmi((await fake('rocm-smi', AMD, ['-d', '1', ...ROCM_SMI_ARGS])).stdout).map((device) => device.index)).toEqual([1]);
  });

  it('lists compute processes, and nothing at all when there is none', async () => {
    const state = { ...AMD, processes: [...AMD.processes, { gpu: 1, pid: 4242, usedMiB: 100, name: 'python3' }, { gpu: 1, pid: 9, usedMiB: 1, name: '/opt/a very long program name' }] };
    const answer = await fake('rocm-smi', state, ROCM_SMI_PIDS_ARGS);
    expect(answer.stdout).toBe('{"system": {"PID4242": "python3, 2, 838860800, 0, unknown", "PID9": "a, very, long, pro, 1, 1048576, 0, unknown"}}\n');
    expect(parseRocmSmiPids(answer.stdout)).toEqual([
      { pid: 4242, name: 'python3', gpuCount: 2, usedBytes: 800 * MiB },
      { pid: 9, name: 'a very long pro', gpuCount: 1, usedBytes: MiB },
    ]);
    expect(await fake('rocm-smi', { ...AMD, processes: [] }, ROCM_SMI_PIDS_ARGS)).toEqual({ exitCode: 0, stdout: '', stderr: 'WARNING: No JSON data to report\n' });
  });

  it('fails as the real tool does: exit 0 with the driver missing, no device, a card that does not exist', async () => {
    const missing = await fake('rocm-smi', { ...AMD, vendor: 'nvidia' }, ROCM_SMI_ARGS);
    expect(missing).toEqual({
      exitCode: 0,
      stdout: '',
      stderr: 'cat: /sys/module/amdgpu/initstate: No such file or directory\nERROR:root:Driver not initialized (amdgpu not found in modules)\n',
    });
    expect(rocmSmiFailure(missing.exitCode, missing.stderr)).toMatchObject({ kind: 'driver' });
    expect((await fake('rocm-smi', { ...AMD, rocm: '6.4.0', failure: 'not-loaded' }, ROCM_SMI_ARGS)).stderr).toBe('ERROR:root:Driver not initialized (amdgpu not found in modules)\n');
    const none = await fake('rocm-smi', { vendor: 'amd', gpus: [] }, ROCM_SMI_ARGS);
    expect(none).toEqual({ exitCode: 0, stdout: '', stderr: 'WARNING: No AMD GPUs specified\nWARNING: No JSON data to report\n' });
    expect(parseRocmSmi(none.stdout)).toEqual([]);
    expect(rocmSmiFailure(none.exitCode, none.stderr)).toBeUndefined();
    expect(await fake('rocm-smi', AMD, ['-d', '7', ...ROCM_SMI_ARGS])).toEqual({ exitCode: 0, stdout: '', stderr: 'WARNING: No such device card7\n' });
    expect((await fake('rocm-smi', AMD, ['--bogus'])).exitCode).toBe(2);
  });
});

describe('the stand-in amd-smi, read as the real one', () => {
  const VERSIONS = ['23.4.2', '24.4.1', '24.5.1', '24.5.2', '24.6.2', '25.5.1', '26.1.0'];

  it('lists GPUs in every generation, a single GPU of 23.4 as a bare object', async () => {
    for (const amdSmi of VERSIONS) {
      const listed = parseAmdSmiList((await fake('amd-smi', { ...AMD, amdSmi }, AMD_SMI_LIST_ARGS)).stdout);
      expect(listed, amdSmi).toEqual([
        { index: 0, bdf: W7900.bdf, uuid: W7900.uuid, unread: {} },
        { index: 1, bdf: MI210.bdf, uuid: MI210.uuid, unread: {} },
      ]);
    }
    const single = await fake('amd-smi', { ...AMD, gpus: [W7900], amdSmi: '23.4.2' }, AMD_SMI_LIST_ARGS);
    expect(single.stdout).toBe(`{\n    "gpu": 0,\n    "bdf": "0000:03:00.0",\n    "uuid": "${W7900.uuid}"\n}\n`);
    expect((await fake('amd-smi', { ...AMD, gpus: [W7900], amdSmi: '24.4.1' }, AMD_SMI_LIST_ARGS)).stdout.startsWith('[\n    {\n        "gpu": 0,')).toBe(true);
    // HIP's ids from 25.3 on; before, -e is an unknown option.
    const enumerated = await fake('amd-smi', { ...AMD, amdSmi: '25.5.1', gpus: [{ ...W7900, hipUuid: 'GPU-4c1d9e2f77a0b311' }] }, AMD_SMI_LIST_ENUMERATION_ARGS);
    expect(parseAmdSmiList(enumerated.stdout)).toMatchObject([{ hipId: 0, hipUuid: 'GPU-4c1d9e2f77a0b311' }]);
    const refused = await fake('amd-smi', { ...AMD, amdSmi: '24.6.2' }, AMD_SMI_LIST_ENUMERATION_ARGS);
    expect(refused).toMatchObject({ exitCode: 2, stdout: '' });
    expect(amdSmiFailure(refused.exitCode, refused.stderr)).toMatchObject({ kind: 'other' });
  });

  it('answers metric as list or gpu_data, bare numbers or units, and N/A for what it cannot read', async () => {
    const expected = [
      { index: 0, totalBytes: W7900.memoryTotalMiB * MiB, usedBytes: W7900.memoryUsedMiB * MiB, utilization: 37, unread: {} },
      { index: 1, totalBytes: MI210.memoryTotalMiB * MiB, usedBytes: MI210.memoryUsedMiB * MiB, utilization: 0, unread: {} },
    ];
    for (const amdSmi of VERSIONS) {
      const answer = await fake('amd-smi', { ...AMD, amdSmi }, AMD_SMI_METRIC_ARGS);
      expect(answer.stdout.startsWith(amdSmi.startsWith('26.') ? '{\n    "gpu_data": [' : '[\n    {\n        "gpu": 0,'), amdSmi).toBe(true);
      expect(parseAmdSmiMetric(answer.stdout), amdSmi).toEqual(expected);
    }
    const unreadable = { ...AMD, gpus: [{ ...MI210, memoryUsedMiB: 'N/A', utilization: 'N/A' }] };
    for (const amdSmi of ['23.4.2', '24.6.2', '26.1.0']) {
      expect(parseAmdSmiMetric((await fake('amd-smi', { ...unreadable, amdSmi }, AMD_SMI_METRIC_ARGS)).stdout), amdSmi).toEqual([
        { index: 0, totalBytes: MI210.memoryTotalMiB * MiB, usedBytes: undefined, utilization: undefined, unread: { 'mem_usage.used_vram': 'N/A', 'usage.gfx_activity': 'N/A' } },
      ].map((reading) => (amdSmi === '23.4.2' ? { ...reading, unread: { 'mem_usage.used_vram': 'N/A', 'usage.gfx_usage': 'N/A' } } : reading)));
    }
  });

  it('answers process in every generation (24.5 keeps only the last process of a GPU)', async () => {
    const state = { ...AMD, processes: [...AMD.processes, { gpu: 0, pid: 4343, usedMiB: 2, name: 'rvs' }] };
    const both = [
      { gpuIndex: 0, pid: 4242, name: '/usr/bin/python3', usedBytes: 700 * MiB },
      { gpuIndex: 0, pid: 4343, name: 'rvs', usedBytes: 2 * MiB },
    ];
    for (const amdSmi of VERSIONS) {
      const processes = parseAmdSmiProcesses((await fake('amd-smi', { ...state, amdSmi }, AMD_SMI_PROCESS_ARGS)).stdout);
      expect(processes, amdSmi).toEqual(amdSmi.startsWith('24.5.') ? both.slice(1) : both);
      expect(parseAmdSmiProcesses((await fake('amd-smi', { ...state, processes: [], amdSmi }, AMD_SMI_PROCESS_ARGS)).stdout), amdSmi).toEqual([]);
    }
    const none = await fake('amd-smi', { ...AMD, gpus: [W7900], processes: [], amdSmi: '24.6.2' }, AMD_SMI_PROCESS_ARGS);
    expect(none.stdout).toBe('[\n    {\n        "gpu": 0,\n        "process_list": [\n            {\n                "process_info": "No running processes detected"\n            }\n        ]\n    }\n]\n');
  });

  it('fails as the real tool does: exit 255, the driver or no GPU on stderr', async () => {
    const old = await fake('amd-smi', { ...AMD, vendor: 'nvidia', amdSmi: '23.4.2' }, AMD_SMI_METRIC_ARGS);
    expect(old).toEqual({ exitCode: 255, stdout: '', stderr: 'ERROR:root:Driver not found (amdgpu not found in modules)\n' });
    const recent = await fake('amd-smi', { ...AMD, failure: 'not-loaded', amdSmi: '26.1.0', rocm: '7.1.1' }, AMD_SMI_METRIC_ARGS);
    expect(recent.exitCode).toBe(255);
    expect(recent.stderr.split('\n')[0]).toBe('ERROR:root:Unable to get devices, driver not initialized (amdgpu not found in modules)');
    expect(recent.stdout).toBe('AMDSMI Tool: 26.1.0+0000000 | AMDSMI Library version: 26.1.0 | ROCm version: 7.1.1\n');
    for (const failed of [old, recent]) expect(amdSmiFailure(failed.exitCode, failed.stderr)).toMatchObject({ kind: 'driver' });
    expect(() => parseAmdSmiMetric(recent.stdout)).toThrow(/did not answer JSON/);
    const none = await fake('amd-smi', { vendor: 'amd', gpus: [], amdSmi: '24.6.2' }, AMD_SMI_LIST_ARGS);
    expect(none).toEqual({ exitCode: 255, stdout: '', stderr: 'ERROR:root:Unable to detect any GPU devices, check amdgpu version and module status\n' });
    expect(amdSmiFailure(none.exitCode, none.stderr)).toMatchObject({ kind: 'no-devices' });
  });
});
