/**
 * What rocm-smi says, read: its JSON answer about each device (`cardN`:
 * unique id, VRAM, busy percent), its JSON answer about compute processes
 * (`--showpids`, under `system`), and its failures, which it mostly reports
 * with exit code 0. The formats, per ROCm version: docs/gpus.md.
 */
import { isRecord, quoted, toolJson } from './tool-json.js';

/**
 * The question a probe asks about every device. `--showuniqueid` is there
 * also because it always answers (`N/A` at worst): rocm-smi drops a card
 * that reported nothing, and this keeps every device in the answer.
 */
export const ROCM_SMI_ARGS = ['--showuniqueid', '--showmeminfo', 'vram', '--showuse', '--json'] as const;
/** The question about compute processes (asked alone: with it, cards with no data vanish from the answer). */
export const ROCM_SMI_PIDS_ARGS = ['--showpids', '--json'] as const;

/** The fields ROCM_SMI_ARGS gets for each card, as rocm-smi names them. */
export const ROCM_SMI_FIELDS = {
  uuid: 'Unique ID',
  total: 'VRAM Total Memory (B)',
  used: 'VRAM Total Used Memory (B)',
  utilization: 'GPU use (%)',
} as const;

/** A device as rocm-smi reports it; a measure it did not give is undefined, and `unread` says why. */
export interface RocmSmiDevice {
  /** N of `cardN`: rocm-smi's own device index (not necessarily /dev/dri/cardN, nor HIP's order). */
  index: number;
  /** `Unique ID` as printed (`0x…`, no zero padding); '' when rocm-smi could not read it. */
  uuid: string;
  totalBytes?: number;
  usedBytes?: number;
  /** `GPU use (%)`. */
  utilization?: number;
  /** Fields it gave as `N/A` (or anything unreadable), or left out (`not reported`): rocm-smi drops what it cannot read. */
  unread: Record<string, string>;
}

/** A compute process as `--showpids` reports it: a GPU count, not which GPUs. */
export interface RocmSmiProcess {
  pid: number;
  /** `ps -o comm=` of it (15 characters at most), lower-cased by rocm-smi; `unknown` when ps could not see it. */
  name: string;
  gpuCount?: number;
  /** VRAM over all its GPUs. */
  usedBytes?: number;
}

/** The JSON object rocm-smi printed; empty for no output (it prints nothing when no card has data). */
function rocmSmiObject(json: string): Record<string, unknown> {
  const parsed = toolJson('rocm-smi', json);
  if (parsed === undefined) return {};
  if (!isRecord(parsed)) throw new Error(`rocm-smi answered JSON that is not an object keyed by card: ${quoted(json)}`);
  return parsed;
}

/** The answer to ROCM_SMI_ARGS (any spacing: compact as printed, or pretty as reformatted). */
export function parseRocmSmi(json: string): RocmSmiDevice[] {
  const devices: RocmSmiDevice[] = [];
  for (const [key, card] of Object.entries(rocmSmiObject(json))) {
    const match = /^card(\d+)$/.exec(key);
    if (!match || !isRecord(card)) continue;
    const unread: Record<string, string> = {};
    const field = (name: string, pattern: RegExp): string | undefined => {
      const value = card[name];
      if (value === undefined) unread[name] = 'not reported';
      else if (typeof value !== 'string' || !pattern.test(value)) unread[name] = String(value);
      else return value;
      return undefined;
    };
    const number = (name: string, pattern: RegExp) => {
      const value = field(name, pattern);
      return value === undefined ? undefined : Number(value);
    };
    devices.push({
      index: Number(match[1]),
      uuid: field(ROCM_SMI_FIELDS.uuid, /^0x[0-9a-f]+$/i) ?? '',
      totalBytes: number(ROCM_SMI_FIELDS.total, /^\d+$/),
      usedBytes: number(ROCM_SMI_FIELDS.used, /^\d+$/),
      utilization: number(ROCM_SMI_FIELDS.utilization, /^\d+(\.\d+)?$/),
      unread,
    });
  }
  return devices.sort((a, b) => a.index - b.index);
}

/**
 * The answer to ROCM_SMI_PIDS_ARGS: `"system": {"PID4242": "python3, 1,
 * 22858956800, 0, unknown"}` (name, GPU count, VRAM bytes, SDMA use, CU
 * occupancy). rocm-smi builds that string by splitting its table row on
 * spaces, so a name with spaces comes back in several fields: the last
 * four are the numbers, the rest is the name.
 */
export function parseRocmSmiPids(json: string): RocmSmiProcess[] {
  const system = rocmSmiObject(json).system;
  if (!isRecord(system)) return [];
  const processes: RocmSmiProcess[] = [];
  for (const [key, row] of Object.entries(system)) {
    const match = /^PID(\d+)$/.exec(key);
    if (!match || typeof row !== 'string') continue;
    const fields = row.split(', ');
    if (fields.length < 5) continue;
    const [gpus, vram] = fields.slice(-4) as [string, string, string, string];
    processes.push({
      pid: Number(match[1]),
      name: fields.slice(0, -4).join(' '),
      gpuCount: /^\d+$/.test(gpus) ? Number(gpus) : undefined,
      usedBytes: /^\d+$/.test(vram) ? Number(vram) : undefined,
    });
  }
  return processes;
}

/**
 * What a rocm-smi run that printed no JSON means: `driver`, the amdgpu
 * driver not loaded or rocm-smi's library missing (no device can be used;
 * rocm-smi exits 0 for both), or `other` (a non-zero exit). Undefined when
 * nothing failed: `WARNING: No JSON data to report` (no device, or no
 * process for `--showpids`) is an empty answer, not a failure.
 */
export type RocmSmiFailure = { kind: 'driver'; message: string } | { kind: 'other'; message: string };

export function rocmSmiFailure(exitCode: number | undefined, output: string): RocmSmiFailure | undefined {
  const message = output.split('\n').map((line) => line.trim()).filter(Boolean).join(' ').slice(0, 300);
  if (/Driver not initialized \(amdgpu not found in modules\)|Unable to load the rocm_smi library|Unable to find librocm_smi64/.test(message)) {
    return { kind: 'driver', message };
  }
  if (exitCode !== 0) return { kind: 'other', message };
  return undefined;
}
