/**
 * What amd-smi says, read: `list`, `metric` and `process` in JSON, in each
 * form the tool has printed them (a bare object for a single GPU before
 * 24.4, a list after, `{"gpu_data": [...]}` for `metric` from 26.0;
 * numbers bare before 24.4, `{"value", "unit"}` after), and its failures.
 * The formats, per version: docs/gpus.md.
 */
import { isRecord, quoted, toolJson } from './tool-json.js';

export const AMD_SMI_LIST_ARGS = ['list', '--json'] as const;
/** HIP's index and UUID of each device too (`list -e`: amd-smi 25.3 / ROCm 6.4 and later; older ones refuse it, exit 2). */
export const AMD_SMI_LIST_ENUMERATION_ARGS = ['list', '-e', '--json'] as const;
export const AMD_SMI_METRIC_ARGS = ['metric', '--usage', '--mem-usage', '--json'] as const;
export const AMD_SMI_PROCESS_ARGS = ['process', '--json'] as const;

export interface AmdSmiListedGpu {
  /** `gpu`: amd-smi's index. */
  index: number;
  /** PCI address, `0000:03:00.0`; '' when unread. */
  bdf: string;
  /** amd-smi's UUID (`xxxxxxxx-xxxx-…`, not the `GPU-…` form ROCR takes); '' when unread. */
  uuid: string;
  /** With `-e`: HIP's index and UUID (`GPU-…`), what HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES take. */
  hipId?: number;
  hipUuid?: string;
  unread: Record<string, string>;
}

export interface AmdSmiReading {
  index: number;
  totalBytes?: number;
  usedBytes?: number;
  /** GFX activity, %. */
  utilization?: number;
  /** Fields given as `N/A` (or unreadable), or absent (`not reported`), by their JSON path. */
  unread: Record<string, string>;
}

export interface AmdSmiProcess {
  gpuIndex: number;
  pid: number;
  /** As amd-smi names it; `N/A` when it could not tell. */
  name: string;
  /** VRAM it holds on that GPU. */
  usedBytes?: number;
}

/**
 * amd-smi's units are binary: its `MB` is `bytes // (1024*1024)`.
 * Numbers printed bare (before 24.4) are in the unit the field later got.
 */
const UNIT_BYTES: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 };

/** A measure as amd-smi prints it: `42`, `{"value": 42, "unit": "%"}`, or `"N/A"` (said). */
function measureOf(value: unknown): { value?: number; unit?: string; said?: string } {
  if (typeof value === 'number') return { value };
  if (isRecord(value) && typeof value.value === 'number') return { value: value.value, unit: typeof value.unit === 'string' ? value.unit : undefined };
  return { said: value === undefined ? 'not reported' : typeof value === 'string' ? value : JSON.stringify(value) };
}

/** One entry per GPU, whichever form the answer has; objects without a numeric `gpu` (e.g. a version record) are left out. */
function gpuEntries(tool: string, json: string): Record<string, unknown>[] {
  const parsed = toolJson(tool, json);
  if (parsed === undefined) return [];
  const list = Array.isArray(parsed) ? parsed : isRecord(parsed) && Array.isArray(parsed.gpu_data) ? parsed.gpu_data : isRecord(parsed) && 'gpu' in parsed ? [parsed] : undefined;
  if (!list) throw new Error(`${tool} answered JSON of no form fitq knows: ${quoted(json)}`);
  return list.filter((entry): entry is Record<string, unknown> => isRecord(entry) && Number.isInteger(entry.gpu));
}

/** `amd-smi list --json` (with or without `-e`). */
export function parseAmdSmiList(json: string): AmdSmiListedGpu[] {
  return gpuEntries('amd-smi list', json).map((entry) => {
    const unread: Record<string, string> = {};
    const text = (name: string, pattern: RegExp): string => {
      const value = entry[name];
      if (typeof value === 'string' && pattern.test(value)) return value;
      unread[name] = value === undefined ? 'not reported' : String(value);
      return '';
    };
    const listed: AmdSmiListedGpu = {
      index: entry.gpu as number,
      bdf: text('bdf', /^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/i),
      uuid: text('uuid', /^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/i),
      unread,
    };
    if (Number.isInteger(entry.hip_id)) listed.hipId = entry.hip_id as number;
    else if (entry.hip_id !== undefined) unread.hip_id = String(entry.hip_id);
    if (typeof entry.hip_uuid === 'string' && /^GPU-/.test(entry.hip_uuid)) listed.hipUuid = entry.hip_uuid;
    else if (entry.hip_uuid !== undefined) unread.hip_uuid = String(entry.hip_uuid);
    return listed;
  });
}

/** `amd-smi metric --usage --mem-usage --json`: VRAM and GFX activity (`gfx_usage` before 24.4, `gfx_activity` after). */
export function parseAmdSmiMetric(json: string): AmdSmiReading[] {
  return gpuEntries('amd-smi metric', json).map((entry) => {
    const unread: Record<string, string> = {};
    const memory = entry.mem_usage;
    const bytes = (name: string): number | undefined => {
      const path = `mem_usage.${name}`;
      if (!isRecord(memory)) {
        unread[path] = measureOf(memory).said ?? String(memory);
        return undefined;
      }
      const measure = measureOf(memory[name]);
      const unit = UNIT_BYTES[measure.unit ?? 'MB'];
      if (measure.value !== undefined && unit !== undefined) return measure.value * unit;
      unread[path] = measure.said ?? `${measure.value} ${measure.unit}`;
      return undefined;
    };
    const usage = entry.usage;
    const activityName = isRecord(usage) && !('gfx_activity' in usage) && 'gfx_usage' in usage ? 'gfx_usage' : 'gfx_activity';
    const activity = measureOf(isRecord(usage) ? usage[activityName] : usage);
    if (activity.value === undefined) unread[isRecord(usage) || usage === undefined ? `usage.${activityName}` : 'usage'] = activity.said ?? '';
    return { index: entry.gpu as number, totalBytes: bytes('total_vram'), usedBytes: bytes('used_vram'), utilization: activity.value, unread };
  });
}

/** One `process_info` (an object, or a sentence for none: `No running processes detected`, before 24.5 `Not Found`). */
function processOf(gpuIndex: number, info: unknown): AmdSmiProcess[] {
  if (!isRecord(info) || !Number.isInteger(info.pid)) return [];
  // VRAM of the process on this GPU; `mem_usage` (all its memory) when that is missing.
  const memory = isRecord(info.memory_usage) ? measureOf(info.memory_usage.vram_mem) : { said: 'not reported' };
  const measure = memory.value !== undefined ? memory : measureOf(info.mem_usage);
  const unit = UNIT_BYTES[measure.unit ?? 'B'];
  return [{
    gpuIndex,
    pid: info.pid as number,
    name: typeof info.name === 'string' ? info.name : 'N/A',
    usedBytes: measure.value !== undefined && unit !== undefined ? measure.value * unit : undefined,
  }];
}

/**
 * `amd-smi process --json`, each GPU's processes under `process_list`
 * (24.6 and later), or, before, `process_info` (one process; 24.5 printed
 * only the last of several) or `values` (several, before 24.5).
 */
export function parseAmdSmiProcesses(json: string): AmdSmiProcess[] {
  return gpuEntries('amd-smi process', json).flatMap((entry) => {
    const gpuIndex = entry.gpu as number;
    const wrapped = Array.isArray(entry.process_list) ? entry.process_list : Array.isArray(entry.values) ? entry.values : [entry];
    return wrapped.flatMap((item: unknown) => (isRecord(item) ? processOf(gpuIndex, item.process_info) : []));
  });
}

/**
 * What a failed amd-smi means: `driver`, the amdgpu driver not loaded (no
 * device can be used), `no-devices`, the driver loaded but no GPU found, or
 * `other`. amd-smi exits 255 for the first two; the messages are on stderr,
 * `ERROR:root:` or `ERROR: ` first depending on the install.
 */
export type AmdSmiFailure =
  | { kind: 'driver'; message: string }
  | { kind: 'no-devices'; message: string }
  | { kind: 'other'; message: string };

export function amdSmiFailure(exitCode: number | undefined, output: string): AmdSmiFailure | undefined {
  const message = output.split('\n').map((line) => line.trim()).filter(Boolean).join(' ').slice(0, 300);
  if (/Drivers? not (loaded|found)|driver not initialized \(amdgpu not found in modules\)/i.test(message)) return { kind: 'driver', message };
  if (/Unable to detect any (GPU )?devices/.test(message)) return { kind: 'no-devices', message };
  if (exitCode !== 0) return { kind: 'other', message };
  return undefined;
}
