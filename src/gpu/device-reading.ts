/**
 * What a worker's GPU probe records of each of its devices, in
 * `worker:<name>:gpus` (recordGpuProbe-*.lua), for its claims
 * (includes/devices/readGpuReadings.lua reads `state` and `why`) and for
 * `fitq workers`, the dashboard and /metrics: one JSON codec, here.
 */
import type { GpuDevice } from './gpu-devices.js';
import { describeForeign, type ProbedDevice, type ProbeResult } from './probe.js';

/**
 * `ok`: runs may be placed on it; `busy`: a compute process fitq did not
 * start holds it; `lost`: nvidia-smi cannot reach it.
 */
export type DeviceState = 'ok' | 'busy' | 'lost';

export interface DeviceReading {
  state: DeviceState;
  /** Its UUID (`GPU-…`, a MIG device's `MIG-…`), as DCGM labels it. */
  uuid?: string;
  /** Why it is busy or lost, in words (`used by a process fitq did not start (pid 4242, python, 21.3 GiB)`). */
  why?: string;
  totalMiB?: number;
  /** Used by every process and the driver. */
  usedMiB?: number;
  /** Used by the compute processes fitq did not start (ignored ones included). */
  foreignMiB?: number;
  /** GPU utilisation, %. */
  utilization?: number;
  /** Memory the worker's runs use on it (MiB), by run id: what of their gpumem they have allocated (includes/devices/deviceMemory.lua). */
  runsMiB?: Record<string, number>;
}

/** Whether a device holding processes fitq did not start is busy (`busy`, the default) or trusted to fitq's bookkeeping (`ignore`). */
export type ForeignPolicy = 'busy' | 'ignore';

export function encodeDeviceReading(reading: DeviceReading): string {
  return JSON.stringify(reading);
}

/** A reading as Redis holds it; undefined for anything else (a hand-written field). */
export function decodeDeviceReading(text: string | undefined): DeviceReading | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Partial<DeviceReading> | null;
    if (!value || (value.state !== 'ok' && value.state !== 'busy' && value.state !== 'lost')) return undefined;
    const number = (field: unknown) => (typeof field === 'number' && Number.isFinite(field) ? field : undefined);
    return {
      state: value.state,
      ...(typeof value.uuid === 'string' ? { uuid: value.uuid } : {}),
      ...(typeof value.why === 'string' ? { why: value.why } : {}),
      ...optional('totalMiB', number(value.totalMiB)),
      ...optional('usedMiB', number(value.usedMiB)),
      ...optional('foreignMiB', number(value.foreignMiB)),
      ...optional('utilization', number(value.utilization)),
      ...(value.runsMiB && typeof value.runsMiB === 'object' ? { runsMiB: runsOf(value.runsMiB) } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Run id -> MiB, numbers only. */
function runsOf(value: object): Record<string, number> {
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, number] => typeof entry[1] === 'number' && Number.isFinite(entry[1])));
}

function optional<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

/** What a reading is made of: a probed GPU, or one of its MIG devices. */
type Probed = Pick<ProbedDevice, 'uuid' | 'totalMiB' | 'usedMiB' | 'utilization' | 'foreign' | 'own'>;

/** One probed device's reading: busy when a process fitq did not start holds it (unless the policy ignores them). */
function readingOf(device: Probed, foreign: ForeignPolicy): DeviceReading {
  const foreignMiB = device.foreign.reduce((sum, process) => sum + (process.usedMiB ?? 0), 0);
  const measures = {
    uuid: device.uuid,
    ...optional('totalMiB', device.totalMiB),
    ...optional('usedMiB', device.usedMiB),
    foreignMiB,
    ...optional('utilization', device.utilization),
    ...(Object.keys(device.own).length > 0 ? { runsMiB: device.own } : {}),
  };
  if (device.foreign.length > 0 && foreign === 'busy') return { state: 'busy', why: describeForeign(device.foreign), ...measures };
  return { state: 'ok', ...measures };
}

/**
 * The readings of the worker's devices (by id) from a probe: a device
 * the probe could not reach, or that nvidia-smi no longer lists, is lost;
 * every device is when nvidia-smi failed as a whole. A MIG device reads
 * from its GPU's report (its own memory and processes; a process on the
 * GPU that names no slice makes every slice busy); without a report it
 * reads as its GPU does, without memory (a GPU's is not its slices').
 */
export function deviceReadings(result: ProbeResult, devices: readonly GpuDevice[], foreign: ForeignPolicy): Map<number, DeviceReading> {
  const readings = new Map<number, DeviceReading>();
  for (const device of devices) {
    const reading = gpuReading(result, device.gpu, foreign);
    readings.set(device.id, device.mig ? sliceReading(result, reading, device, foreign) : reading);
  }
  return readings;
}

/** A MIG device's reading, given its GPU's. */
function sliceReading(result: ProbeResult, gpu: DeviceReading, device: GpuDevice, foreign: ForeignPolicy): DeviceReading {
  const probed = result.ok ? result.devices.find((one) => one.index === device.gpu) : undefined;
  const slices = gpu.state === 'lost' ? undefined : probed?.slices;
  if (!probed || !slices) {
    const { state, why, utilization } = gpu;
    return { state, uuid: device.uuid, ...(why === undefined ? {} : { why }), ...optional('utilization', utilization) };
  }
  const slice = slices.find((one) => one.index === device.mig?.index);
  if (!slice) return { state: 'lost', uuid: device.uuid, why: `nvidia-smi no longer lists MIG device ${device.mig?.index} of GPU ${device.gpu}` };
  return readingOf({ ...slice, uuid: device.uuid, utilization: gpu.utilization, foreign: [...probed.foreign, ...slice.foreign] }, foreign);
}

/** What a probe says of one GPU (by nvidia-smi's index). */
function gpuReading(result: ProbeResult, index: number, foreign: ForeignPolicy): DeviceReading {
  const tool = result.tool ?? 'nvidia-smi';
  if (!result.ok) return { state: 'lost', why: `${tool} failed: ${result.failure.message}` };
  const lost = result.lost.find((device) => device.index === index);
  const device = result.devices.find((probed) => probed.index === index);
  if (lost) return { state: 'lost', why: `${tool} cannot reach it: ${lost.message}` };
  if (!device) return { state: 'lost', why: `${tool} no longer lists it` };
  return readingOf(device, foreign);
}
