/**
 * Which GPU devices a worker assigns runs to: `--gpus auto` (the devices
 * `nvidia-smi -L` lists, limited by the worker's own CUDA_VISIBLE_DEVICES;
 * on a box without nvidia-smi, the AMD devices amd-smi or rocm-smi lists,
 * limited by its ROCR_VISIBLE_DEVICES; refused when the tool says the
 * driver cannot be used), `none`, or a list like `0,1,3`.
 */
import { execa } from 'execa';
import { oneLine, quote } from '../text/quote.js';
import { parseDeviceList } from '../resources/devices.js';
import { GpuDriverError, UsageError } from '../errors.js';
import { devicesOf, type GpuDevice } from '../gpu/gpu-devices.js';
import { NVIDIA_SMI_TIMEOUT_MS, nvidiaSmiFailure, parseGpuList } from '../gpu/nvidia-smi.js';
import { listAmdGpus } from '../gpu/amd-list.js';

export type GpuOption = 'auto' | 'none' | string | readonly number[];
export type GpuVendor = 'nvidia' | 'amd';

/** Devices found; with none, why (nvidia-smi missing or failing, or all hidden), for the worker to say. */
export interface GpuDetection {
  devices: number[];
  /** Whose devices: runs get CUDA_VISIBLE_DEVICES (nvidia, and a list given by hand) or ROCR_VISIBLE_DEVICES (amd). */
  vendor?: GpuVendor;
  whyNone?: string;
  /** Devices nvidia-smi could not reach while listing the others (exit 15): the worker starts without them. */
  unreachable?: string;
  /** What nvidia-smi says of each device (MIG devices, UUIDs), when it was asked. */
  details?: GpuDevice[];
}

/** The devices `nvidia-smi -L` lists that CUDA_VISIBLE_DEVICES (indices or UUIDs) allows; none without nvidia-smi. */
export async function detectGpus(env: NodeJS.ProcessEnv = process.env): Promise<GpuDetection> {
  const result = await execa('nvidia-smi', ['-L'], { reject: false, env, timeout: NVIDIA_SMI_TIMEOUT_MS });
  // Set when it could not be started at all (ENOENT, EACCES...).
  const spawnError = result.failed && 'code' in result && result.code !== undefined ? String(result.code) : undefined;
  if (spawnError === 'ENOENT') return detectAmdGpus(env);
  if (result.timedOut) return { devices: [], whyNone: `nvidia-smi failed: no answer within ${NVIDIA_SMI_TIMEOUT_MS / 1000} s` };
  // A device fallen off the bus: -L lists the others and says which it could not reach.
  const lost = result.exitCode === 15 && parseGpuList(String(result.stdout)).length > 0;
  if (result.exitCode !== 0 && !lost) {
    const said = firstLine(String(result.stderr)) || firstLine(String(result.stdout));
    const how = result.exitCode === undefined ? (result.signal ?? spawnError ?? 'could not run') : `exit code ${result.exitCode}`;
    // A driver that is not loaded, or not the version of its library: a GPU box that lost its GPUs, not a box without any.
    if (result.exitCode !== undefined && nvidiaSmiFailure(result.exitCode, `${String(result.stdout)}\n${String(result.stderr)}`).kind === 'driver') {
      throw new GpuDriverError(`--gpus auto: nvidia-smi failed: ${said} (${how}); mend the driver, or start the worker with --gpus none or a list of devices`);
    }
    return { devices: [], whyNone: `nvidia-smi failed: ${said ? `${said} (${how})` : how}` };
  }
  const listed = devicesOf(parseGpuList(String(result.stdout)));
  if (listed.length === 0) return { devices: [], whyNone: 'nvidia-smi -L lists no devices' };
  const unreachable = lost ? { unreachable: unreachableLines(String(result.stdout)) } : {};
  const visible = env.CUDA_VISIBLE_DEVICES;
  // By index (a whole GPU's, or a MIG-enabled GPU's: all its slices) or by UUID (a GPU's, or a MIG device's).
  const allowed = visible === undefined ? undefined : new Set(visible.split(',').map((entry) => entry.trim()).filter(Boolean));
  const chosen = allowed ? listed.filter((device) => allowed.has(String(device.gpu)) || allowed.has(device.uuid)) : listed;
  if (chosen.length === 0) return { devices: [], whyNone: `CUDA_VISIBLE_DEVICES=${quote(visible ?? '')} hides every device` };
  return { devices: chosen.map((device) => device.id).sort((a, b) => a - b), vendor: 'nvidia', details: chosen, ...unreachable };
}

/** The AMD devices amd-smi or rocm-smi lists, limited by the worker's ROCR_VISIBLE_DEVICES (indices). */
async function detectAmdGpus(env: NodeJS.ProcessEnv): Promise<GpuDetection> {
  const listing = await listAmdGpus();
  if ('driver' in listing && listing.driver !== undefined) {
    throw new GpuDriverError(`--gpus auto: ${listing.why}; mend the driver, or start the worker with --gpus none or a list of devices`);
  }
  if ('why' in listing) return { devices: [], whyNone: listing.why };
  const visible = env.ROCR_VISIBLE_DEVICES;
  if (visible === undefined) return { devices: listing.devices, vendor: 'amd' };
  const allowed = new Set(visible.split(',').map((entry) => entry.trim()).filter(Boolean));
  const devices = listing.devices.filter((index) => allowed.has(String(index)));
  return devices.length > 0 ? { devices, vendor: 'amd' } : { devices, whyNone: `ROCR_VISIBLE_DEVICES=${quote(visible)} hides every device` };
}

/** What -L said of the devices it could not reach, on one line. */
function unreachableLines(output: string): string {
  return oneLine(output.split('\n').filter((line) => line.startsWith('Unable to determine')).join(' ').slice(0, 300));
}

/** The first line of what nvidia-smi said, on one line and cut short. */
function firstLine(text: string): string {
  return oneLine((text.trim().split('\n')[0] ?? '').trim().slice(0, 200));
}

export async function resolveGpus(option: GpuOption | undefined): Promise<GpuDetection> {
  if (option === undefined || option === 'none') return { devices: [] };
  if (option === 'auto') return detectGpus();
  const list = typeof option === 'string' ? option : option.join(',');
  const entries = list.split(',').map((entry) => entry.trim());
  if (entries.some((entry) => /^(GPU|MIG)-/.test(entry))) return devicesByUuid(list, entries);
  return { devices: parseDeviceList(list, '--gpus', 'auto, none, UUIDs (GPU-…, MIG-…) or device indices like 0,1,3'), vendor: 'nvidia' };
}

/** `--gpus GPU-…,MIG-…,3`: the devices nvidia-smi lists by those UUIDs (or ids). */
async function devicesByUuid(list: string, entries: string[]): Promise<GpuDetection> {
  // Every device, whatever the worker's own CUDA_VISIBLE_DEVICES: the UUIDs name them.
  const env = { ...process.env };
  delete env.CUDA_VISIBLE_DEVICES;
  const found = await detectGpus(env);
  const details = found.details ?? [];
  const chosen = entries.map((entry) => {
    const device = details.find((candidate) => candidate.uuid === entry || String(candidate.id) === entry);
    if (!device) throw new UsageError(`invalid --gpus ${quote(list)}: no device nvidia-smi lists is ${quote(entry)}${found.whyNone ? ` (${found.whyNone})` : ''}`);
    return device;
  });
  if (new Set(chosen.map((device) => device.id)).size !== chosen.length) throw new UsageError(`invalid --gpus ${quote(list)}: a device is listed twice`);
  return { devices: chosen.map((device) => device.id).sort((a, b) => a - b), vendor: 'nvidia', details: chosen };
}
