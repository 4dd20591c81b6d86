/**
 * What nvidia-smi says, read: its device list (`-L`, MIG slices included,
 * in the R470+ and the older form), its CSV queries of devices and of
 * compute processes, and its failures (the driver as a whole, or one device
 * fallen off the bus). The formats, and where each was seen: docs/gpus.md.
 */

/** How long fitq waits for an answer from nvidia-smi (a hung driver can hold it for good). */
export const NVIDIA_SMI_TIMEOUT_MS = 10_000;

/** The query of every device a probe makes, in this order. */
export const GPU_QUERY = ['index', 'uuid', 'name', 'pci.bus_id', 'memory.total', 'memory.used', 'utilization.gpu'] as const;
/** The query of compute processes a probe makes, in this order (process_name last: it may hold commas). */
export const COMPUTE_APPS_QUERY = ['gpu_uuid', 'pid', 'used_memory', 'process_name'] as const;

/** A MIG slice of a GPU, as `-L` lists it. */
export interface ListedMigDevice {
  /** Its profile, e.g. "1g.10gb". */
  profile: string;
  /** Its index among the GPU's MIG devices. */
  index: number;
  /** What CUDA_VISIBLE_DEVICES takes for it: `MIG-<uuid>` (R470+) or `MIG-GPU-<uuid>/<gi>/<ci>` (before). */
  uuid: string;
}

export interface ListedGpu {
  index: number;
  name: string;
  uuid: string;
  mig: ListedMigDevice[];
}

const GPU_LINE = /^GPU (\d+): (.*) \(UUID: ([^)]+)\)$/;
// R470+: "  MIG 1g.5gb      Device  0: (UUID: MIG-…)"; before: "  MIG 1g.5gb Device 0: (UUID: MIG-GPU-…/7/0)".
const MIG_LINE = /^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: ([^)]+)\)$/;

/** `nvidia-smi -L`: each GPU with its MIG devices; lines of anything else (errors) are left out. */
export function parseGpuList(output: string): ListedGpu[] {
  const gpus: ListedGpu[] = [];
  for (const line of output.split('\n')) {
    const gpu = GPU_LINE.exec(line.trim());
    if (gpu) {
      gpus.push({ index: Number(gpu[1]), name: gpu[2]!, uuid: gpu[3]!, mig: [] });
      continue;
    }
    const mig = MIG_LINE.exec(line.trimEnd());
    if (mig && gpus.length > 0) gpus[gpus.length - 1]!.mig.push({ profile: mig[1]!, index: Number(mig[2]), uuid: mig[3]! });
  }
  return gpus;
}

/**
 * A field nvidia-smi could not give: `[N/A]`, `[Not Supported]`,
 * `[Insufficient Permissions]`, `[Unknown Error]`, `[GPU requires reset]`…
 * (bracketed, with or without units); undefined for a value.
 */
export function placeholderOf(field: string): string | undefined {
  return /^\[[^\]]*\]$/.test(field) ? field.slice(1, -1) : undefined;
}

/**
 * One CSV row of `count` fields joined by ", ", the last one whole (a
 * process name may hold ", "); undefined when the row has fewer fields.
 */
export function splitRow(line: string, count: number): string[] | undefined {
  const fields: string[] = [];
  let rest = line;
  for (let i = 1; i < count; i++) {
    const at = rest.indexOf(', ');
    if (at < 0) return undefined;
    fields.push(rest.slice(0, at));
    rest = rest.slice(at + 2);
  }
  fields.push(rest);
  return fields;
}

/** A number from a field with or without its unit ("40960", "40960 MiB", "37 %"); undefined for a placeholder or anything else. */
function numberOf(field: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(?: (?:MiB|%))?$/.exec(field);
  return match ? Number(match[1]) : undefined;
}

/** The data rows of a CSV answer: without its header (when asked with one) and blank lines. */
function rowsOf(output: string, firstHeaderField: string): string[] {
  return output.split('\n').filter((line) => line !== '' && !line.startsWith(`${firstHeaderField}, `) && line !== firstHeaderField);
}

/** A device as the probe reads it; a measure nvidia-smi could not give is undefined, and `unread` says why. */
export interface GpuReading {
  index: number;
  uuid: string;
  name: string;
  /** Its PCI bus id as failures name it (`0000:3b:00.0`, see busIdKey). */
  busId: string;
  memoryTotalMiB: number | undefined;
  memoryUsedMiB: number | undefined;
  utilizationPercent: number | undefined;
  /** Fields given as placeholders, with what they said (e.g. `memory.used: Insufficient Permissions`). */
  unread: Record<string, string>;
}

/** The answer to `--query-gpu=` GPU_QUERY `--format=csv,noheader,nounits` (a header and units are accepted too). */
export function parseGpuQuery(output: string): GpuReading[] {
  const readings: GpuReading[] = [];
  for (const line of rowsOf(output, 'index')) {
    const fields = splitRow(line, GPU_QUERY.length);
    if (!fields) continue;
    const [index, uuid, name, busId, total, used, utilization] = fields as [string, string, string, string, string, string, string];
    if (numberOf(index) === undefined) continue;
    const unread: Record<string, string> = {};
    const measure = (field: (typeof GPU_QUERY)[number], value: string) => {
      const said = placeholderOf(value);
      if (said !== undefined) unread[field] = said;
      return numberOf(value);
    };
    readings.push({
      index: Number(index),
      uuid,
      name,
      busId: busIdKey(busId),
      memoryTotalMiB: measure('memory.total', total),
      memoryUsedMiB: measure('memory.used', used),
      utilizationPercent: measure('utilization.gpu', utilization),
      unread,
    });
  }
  return readings;
}

/**
 * A PCI bus id in one spelling: the queries give an 8-digit domain
 * (`00000000:3B:00.0`), failures a 4-digit one (`0000:3B:00.0`).
 */
export function busIdKey(busId: string): string {
  const match = /^([0-9A-Fa-f]+):([0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])$/.exec(busId.trim());
  if (!match) return busId.trim().toLowerCase();
  return `${match[1]!.slice(-4).padStart(4, '0')}:${match[2]}`.toLowerCase();
}

/** A compute process on a device; its memory undefined when not reported (MIG, containers). */
export interface ComputeApp {
  gpuUuid: string;
  pid: number;
  usedMiB: number | undefined;
  /** A path or a short name; a placeholder such as `[Not Found]` when nvidia-smi could not see it. */
  processName: string;
}

/** The answer to `--query-compute-apps=` COMPUTE_APPS_QUERY `--format=csv,noheader,nounits` (empty: no processes). */
export function parseComputeApps(output: string): ComputeApp[] {
  const apps: ComputeApp[] = [];
  for (const line of rowsOf(output, 'gpu_uuid')) {
    const fields = splitRow(line, COMPUTE_APPS_QUERY.length);
    if (!fields) continue;
    const [gpuUuid, pid, used, processName] = fields as [string, string, string, string];
    if (!/^\d+$/.test(pid)) continue;
    apps.push({ gpuUuid, pid: Number(pid), usedMiB: numberOf(used), processName });
  }
  return apps;
}

/**
 * What a failed nvidia-smi means: `driver`, the driver as a whole (not
 * loaded, NVML missing or of another version: no device can be used),
 * `lost`, devices fallen off the bus or otherwise unreachable (their bus
 * ids, as the messages give them), or `other`.
 */
export type NvidiaSmiFailure =
  | { kind: 'driver'; message: string }
  | { kind: 'lost'; message: string; busIds: string[] }
  | { kind: 'other'; message: string };

/** Exit codes nvidia-smi's manual gives for a driver it cannot use (9, 12), and a driver/library version mismatch (18). */
const DRIVER_EXIT_CODES = new Set([9, 12, 18]);

export function nvidiaSmiFailure(exitCode: number | undefined, output: string): NvidiaSmiFailure {
  const lines = output.split('\n').map((line) => line.trim()).filter(Boolean);
  const message = lines.join(' ').slice(0, 300);
  // "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot…" (R525+ drop the space after GPU).
  const handles = lines.flatMap((line) => {
    const match = /^Unable to determine the device handle for (?:GPU|gpu) ?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])/.exec(line);
    return match ? [busIdKey(match[1]!)] : [];
  });
  if (handles.length > 0 || exitCode === 15) return { kind: 'lost', message, busIds: handles };
  if ((exitCode !== undefined && DRIVER_EXIT_CODES.has(exitCode)) || /^(NVIDIA-SMI has failed|NVIDIA-SMI couldn't find|Failed to initialize NVML)/.test(message)) {
    return { kind: 'driver', message };
  }
  return { kind: 'other', message };
}
