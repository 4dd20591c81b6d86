/**
 * Reading `nvidia-smi -q -x` for MIG devices: a report in the shape R535
 * prints (elements the reader does not need left out), and the stand-in's
 * report, run as a process, read by the same code.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { MIG_REPORT_ARGS, parseMigReport } from '../../src/gpu/nvidia-smi-xml.js';

const FAKE = fileURLToPath(new URL('../fixtures/fake-gpu/nvidia-smi', import.meta.url));

/** A MIG-enabled A100 with two slices and a GPU without MIG, as R535 (535.161.08) lays them out. */
const R535_REPORT = `<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
\t<driver_version>535.161.08</driver_version>
\t<attached_gpus>2</attached_gpus>
\t<gpu id="00000000:3B:00.0">
\t\t<product_name>NVIDIA A100-SXM4-40GB</product_name>
\t\t<mig_mode>
\t\t\t<current_mig>Enabled</current_mig>
\t\t\t<pending_mig>Enabled</pending_mig>
\t\t</mig_mode>
\t\t<mig_devices>
\t\t\t<mig_device>
\t\t\t\t<index>0</index>
\t\t\t\t<gpu_instance_id>1</gpu_instance_id>
\t\t\t\t<compute_instance_id>0</compute_instance_id>
\t\t\t\t<fb_memory_usage>
\t\t\t\t\t<total>19968 MiB</total>
\t\t\t\t\t<reserved>0 MiB</reserved>
\t\t\t\t\t<used>3059 MiB</used>
\t\t\t\t\t<free>16909 MiB</free>
\t\t\t\t</fb_memory_usage>
\t\t\t</mig_device>
\t\t\t<mig_device>
\t\t\t\t<index>1</index>
\t\t\t\t<gpu_instance_id>7</gpu_instance_id>
\t\t\t\t<compute_instance_id>0</compute_instance_id>
\t\t\t\t<fb_memory_usage>
\t\t\t\t\t<total>4864 MiB</total>
\t\t\t\t\t<reserved>0 MiB</reserved>
\t\t\t\t\t<used>N/A</used>
\t\t\t\t\t<free>N/A</free>
\t\t\t\t</fb_memory_usage>
\t\t\t</mig_device>
\t\t</mig_devices>
\t\t<uuid>GPU-6109dd5c-d378-24ee-f344-79b537574ea6</uuid>
\t\t<fb_memory_usage>
\t\t\t<total>40960 MiB</total>
\t\t\t<reserved>571 MiB</reserved>
\t\t\t<used>3070 MiB</used>
\t\t\t<free>37318 MiB</free>
\t\t</fb_memory_usage>
\t\t<processes>
\t\t\t<process_info>
\t\t\t\t<gpu_instance_id>1</gpu_instance_id>
\t\t\t\t<compute_instance_id>0</compute_instance_id>
\t\t\t\t<pid>4242</pid>
\t\t\t\t<type>C</type>
\t\t\t\t<process_name>/opt/vllm &amp; co/bin/python</process_name>
\t\t\t\t<used_memory>3048 MiB</used_memory>
\t\t\t</process_info>
\t\t\t<process_info>
\t\t\t\t<gpu_instance_id>3</gpu_instance_id>
\t\t\t\t<compute_instance_id>0</compute_instance_id>
\t\t\t\t<pid>4300</pid>
\t\t\t\t<type>C</type>
\t\t\t\t<process_name></process_name>
\t\t\t\t<used_memory>N/A</used_memory>
\t\t\t</process_info>
\t\t</processes>
\t\t<accounted_processes>
\t\t</accounted_processes>
\t</gpu>
\t<gpu id="00000000:3C:00.0">
\t\t<product_name>NVIDIA A100-SXM4-40GB</product_name>
\t\t<mig_mode>
\t\t\t<current_mig>Disabled</current_mig>
\t\t\t<pending_mig>Disabled</pending_mig>
\t\t</mig_mode>
\t\t<mig_devices>
\t\t\tNone
\t\t</mig_devices>
\t\t<uuid>GPU-b</uuid>
\t\t<processes>
\t\t\t<process_info>
\t\t\t\t<gpu_instance_id>N/A</gpu_instance_id>
\t\t\t\t<compute_instance_id>N/A</compute_instance_id>
\t\t\t\t<pid>1200</pid>
\t\t\t\t<type>G</type>
\t\t\t\t<process_name>/usr/lib/xorg/Xorg</process_name>
\t\t\t\t<used_memory>61 MiB</used_memory>
\t\t\t</process_info>
\t\t</processes>
\t</gpu>

</nvidia_smi_log>
`;

describe('nvidia-smi -q -x', () => {
  it('reads each MIG device’s memory and the processes on it, by instance ids; a GPU without MIG gives nothing', () => {
    const reports = parseMigReport(R535_REPORT);
    expect([...reports.keys()]).toEqual(['GPU-6109dd5c-d378-24ee-f344-79b537574ea6']);
    const report = reports.get('GPU-6109dd5c-d378-24ee-f344-79b537574ea6')!;
    expect(report.slices).toEqual([
      { index: 0, gpuInstance: 1, computeInstance: 0, totalMiB: 19968, usedMiB: 3059, unread: {} },
      { index: 1, gpuInstance: 7, computeInstance: 0, totalMiB: 4864, usedMiB: undefined, unread: { 'memory.used': 'N/A' } },
    ]);
    // A process whose instance ids name no listed slice is the GPU's (every slice's).
    expect(report.processes).toEqual([
      { pid: 4242, name: '/opt/vllm & co/bin/python', usedMiB: 3048, slice: 0 },
      { pid: 4300, name: '[Not Found]', usedMiB: undefined, slice: undefined },
    ]);
  });

  it('gives nothing for what is not such a report', () => {
    expect(parseMigReport('').size).toBe(0);
    expect(parseMigReport('No devices were found\n').size).toBe(0);
    expect(parseMigReport('<nvidia_smi_log><gpu><uuid>GPU-x</uuid></gpu>').size).toBe(0);
  });

  it('reads the stand-in’s report as the real one, and the stand-in fails as the tool does for a lost GPU', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'fitq-fake-gpu-')), 'state.json');
    const state = {
      gpus: [
        {
          name: 'NVIDIA A100-SXM4-40GB',
          uuid: 'GPU-a',
          memoryTotalMiB: 40960,
          memoryUsedMiB: 412,
          mig: [
            { profile: '3g.20gb', uuid: 'MIG-1', gi: 1, memoryTotalMiB: 19968 },
            { profile: '1g.5gb', uuid: 'MIG-2', gi: 7 },
          ],
        },
        { name: 'NVIDIA A100-SXM4-40GB', uuid: 'GPU-b', memoryTotalMiB: 40960, memoryUsedMiB: 412, lost: true },
      ],
      processes: [{ gpu: 0, slice: 1, pid: 4242, usedMiB: 900, name: 'python <3>' }],
    };
    writeFileSync(file, JSON.stringify(state));
    const run = (args: string[]) => execa(FAKE, args, { env: { FAKE_GPU_STATE: file }, reject: false });
    const answer = await run([...MIG_REPORT_ARGS, '-i', '0']);
    expect(answer.exitCode).toBe(0);
    expect(String(answer.stdout)).toContain('<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">');
    expect(parseMigReport(String(answer.stdout)).get('GPU-a')).toEqual({
      uuid: 'GPU-a',
      slices: [
        { index: 0, gpuInstance: 1, computeInstance: 0, totalMiB: 19968, usedMiB: 11, unread: {} },
        { index: 1, gpuInstance: 7, computeInstance: 0, totalMiB: 4864, usedMiB: 911, unread: {} },
      ],
      processes: [{ pid: 4242, name: 'python <3>', usedMiB: undefined, slice: 1 }],
    });
    const lost = await run([...MIG_REPORT_ARGS]);
    expect(lost.exitCode).toBe(15);
    expect(String(lost.stdout)).toBe('Unable to determine the device handle for GPU0000:3C:00.0: GPU is lost.  Reboot the system to recover this GPU');
  });
});
