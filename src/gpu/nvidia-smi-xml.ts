/**
 * What `nvidia-smi -q -x` says of MIG-enabled GPUs: each MIG device's own
 * memory and the compute processes on it. The CSV queries cannot give
 * either (they name a process by its GPU only, and a GPU's memory is not
 * its slices'), so a probe asks for this report of the GPUs whose slices a
 * worker hands out, and of no other (it is the tool's full report; `-d`
 * does not combine with `-x`). A slice is its `<mig_device>`: `<index>` is
 * the `Device N` of `nvidia-smi -L`, and a process names its slice by GPU
 * and compute instance ids. The format, and where it was seen: docs/gpus.md.
 */
import { XMLParser } from 'fast-xml-parser';
import { placeholderOf } from './nvidia-smi.js';

/** The arguments of the report, before `-i` names the GPUs. */
export const MIG_REPORT_ARGS = ['-q', '-x'] as const;

export interface MigSliceReading {
  /** Its index among the GPU's MIG devices (`-L`'s `Device N`). */
  index: number;
  gpuInstance: number;
  computeInstance: number;
  totalMiB: number | undefined;
  usedMiB: number | undefined;
  /** Measures the report did not give, with what it said instead (`memory.used: N/A`). */
  unread: Record<string, string>;
}

export interface MigProcess {
  pid: number;
  name: string;
  usedMiB: number | undefined;
  /** The slice it runs on (its index), undefined when its instance ids name none. */
  slice: number | undefined;
}

export interface MigGpuReport {
  uuid: string;
  slices: MigSliceReading[];
  processes: MigProcess[];
}

const parser = new XMLParser({
  parseTagValue: false,
  ignoreAttributes: true,
  isArray: (name) => name === 'gpu' || name === 'mig_device' || name === 'process_info',
});

type Element = Record<string, unknown>;

const elementOf = (value: unknown): Element => (value !== null && typeof value === 'object' ? (value as Element) : {});
const textOf = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');
const listOf = (value: unknown): Element[] => (Array.isArray(value) ? value.map(elementOf) : []);

/** "40448 MiB" -> 40448; a placeholder ("N/A", "[N/A]") or anything else -> undefined. */
function mibOf(text: string): number | undefined {
  const match = /^(\d+) MiB$/.exec(text);
  return match ? Number(match[1]) : undefined;
}

function integerOf(text: string): number | undefined {
  return /^\d+$/.test(text) ? Number(text) : undefined;
}

/** The report's MIG-enabled GPUs, by UUID; other GPUs, and anything not XML of this shape, give nothing. */
export function parseMigReport(xml: string): Map<string, MigGpuReport> {
  const reports = new Map<string, MigGpuReport>();
  let document: Element;
  try {
    document = elementOf(parser.parse(xml));
  } catch {
    return reports;
  }
  for (const gpu of listOf(elementOf(document.nvidia_smi_log).gpu)) {
    const uuid = textOf(gpu.uuid);
    if (!uuid || textOf(elementOf(gpu.mig_mode).current_mig) !== 'Enabled') continue;
    const slices = listOf(elementOf(gpu.mig_devices).mig_device).flatMap((device) => {
      const index = integerOf(textOf(device.index));
      const gpuInstance = integerOf(textOf(device.gpu_instance_id));
      const computeInstance = integerOf(textOf(device.compute_instance_id));
      if (index === undefined || gpuInstance === undefined || computeInstance === undefined) return [];
      const memory = elementOf(device.fb_memory_usage);
      const unread: Record<string, string> = {};
      const measure = (field: string, text: string) => {
        const value = mibOf(text);
        if (value === undefined) unread[field] = placeholderOf(text) ?? (text || 'not given');
        return value;
      };
      return [{ index, gpuInstance, computeInstance, totalMiB: measure('memory.total', textOf(memory.total)), usedMiB: measure('memory.used', textOf(memory.used)), unread }];
    });
    const processes = listOf(elementOf(gpu.processes).process_info).flatMap((process) => {
      const pid = integerOf(textOf(process.pid));
      // Compute processes only (`C`, `M+C`, `C+G`…), as --query-compute-apps lists them.
      if (pid === undefined || !textOf(process.type).split('+').includes('C')) return [];
      const gpuInstance = integerOf(textOf(process.gpu_instance_id));
      const computeInstance = integerOf(textOf(process.compute_instance_id));
      const slice = slices.find((one) => one.gpuInstance === gpuInstance && one.computeInstance === computeInstance);
      return [{ pid, name: textOf(process.process_name) || '[Not Found]', usedMiB: mibOf(textOf(process.used_memory)), slice: slice?.index }];
    });
    reports.set(uuid, { uuid, slices, processes });
  }
  return reports;
}
