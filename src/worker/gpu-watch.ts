/**
 * A worker's GPU probe: at start and every `--gpu-probe-interval`, it asks
 * nvidia-smi what its devices hold (src/gpu/probe.ts) and records each
 * device's state in Redis (recordGpuProbe-*.lua), where its claims read it:
 * a device a process fitq did not start holds is busy, one nvidia-smi
 * cannot reach is lost, and neither takes a run. A device coming free wakes
 * the claim loop, so a run waiting for it starts within one interval. Each
 * change of a device's state is logged once.
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { deviceReadings, encodeDeviceReading, type DeviceReading } from '../gpu/device-reading.js';
import { probeNvidia, type ProbeOptions, type ProbeResult } from '../gpu/probe.js';
import { probeAmd } from '../gpu/amd-probe.js';
import type { GpuVendor } from './gpus.js';
import type { GpuProbeOptions } from './gpu-probe-options.js';
import type { GpuDevice } from '../gpu/gpu-devices.js';
import type { Scripts } from '../queue/scripts.js';
import { readRunToken } from './escaped-sweep.js';

export interface GpuWatchParts {
  name: string;
  /** Whose tool reads the devices: nvidia-smi (nvidia) or amd-smi (amd). */
  vendor: GpuVendor;
  devices: readonly GpuDevice[];
  probe: GpuProbeOptions;
  scripts: Scripts;
  logger: Logger;
  /** The current registration's token. */
  token: () => string;
  /** The tokens and process groups of the worker's runs, each with its run id. */
  runMarks: () => RunMarks;
  /** Called when a device became usable: the claim loop looks again. */
  freed: () => void;
  /** What one of the worker's runs holds on a device now (bytes), at each probe. */
  ownMemory?: (runId: string, device: string, bytes: number) => void;
}

/**
 * The memory of the worker's devices, all told (bytes), from one probe at
 * its start: its capacity `gpumem`, which a run's gpumem (memory on each
 * device it gets) is first checked against; the claim then checks each
 * device's own free memory. Undefined when nvidia-smi gives no device's total.
 */
export async function totalGpuMemory(devices: readonly GpuDevice[], vendor: GpuVendor = 'nvidia'): Promise<bigint | undefined> {
  const result = await probeWith(vendor)({
    ownerOf: async () => undefined,
    ignored: { names: new Set(), pids: new Set() },
    devices: gpusOf(devices),
    migGpus: migGpusOf(devices),
  });
  if (!result.ok) return undefined;
  const totals = devices.flatMap((device) => {
    const gpu = result.devices.find((probed) => probed.index === device.gpu);
    const total = device.mig ? gpu?.slices?.find((slice) => slice.index === device.mig?.index)?.totalMiB : gpu?.totalMiB;
    return total === undefined ? [] : [total];
  });
  if (totals.length === 0) return undefined;
  // In whole megabytes, so it reads as gpumem=85.899G rather than a byte count; below the exact sum, never above.
  const bytes = BigInt(totals.reduce((sum, mib) => sum + mib, 0)) * 1_048_576n;
  return (bytes / 1_000_000n) * 1_000_000n;
}

/** The GPUs (nvidia-smi's indices) the devices are or are slices of. */
function gpusOf(devices: readonly GpuDevice[]): number[] {
  return [...new Set(devices.map((device) => device.gpu))];
}

/** The GPUs whose MIG devices are among the devices: the probe reads their slices. */
function migGpusOf(devices: readonly GpuDevice[]): number[] {
  return gpusOf(devices.filter((device) => device.mig));
}

/** The probe of a vendor's devices: nvidia-smi's, or amd-smi's. */
function probeWith(vendor: GpuVendor): (options: ProbeOptions) => Promise<ProbeResult> {
  return vendor === 'amd' ? probeAmd : probeNvidia;
}

/** How old a reading may be for a claim to place runs on the devices: two intervals. */
export function gpuStaleMs(intervalMs: number): number {
  return intervalMs * 2;
}

export class GpuWatch {
  private timer: NodeJS.Timeout | undefined;
  private last = new Map<number, DeviceReading>();
  private running: Promise<void> | undefined;

  constructor(private readonly parts: GpuWatchParts) {}

  /** Probes now and then every interval. */
  async start(): Promise<void> {
    await this.probe();
    this.timer = setInterval(() => void this.probe(), this.parts.probe.intervalMs);
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** One probe, recorded (a probe still under way is waited for rather than run twice). */
  probe(): Promise<void> {
    this.running ??= this.probeOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async probeOnce(): Promise<void> {
    const { parts } = this;
    const marks = parts.runMarks();
    const result = await probeWith(parts.vendor)({
      ownerOf: (pid) => runOf(pid, marks),
      ignored: parts.probe.ignored,
      devices: gpusOf(parts.devices),
      migGpus: migGpusOf(parts.devices),
    });
    const readings = deviceReadings(result, parts.devices, parts.probe.foreign);
    for (const [id, reading] of readings) {
      for (const [runId, mib] of Object.entries(reading.runsMiB ?? {})) parts.ownMemory?.(runId, String(id), mib * 1_048_576);
    }
    try {
      const recorded = await parts.scripts.recordGpuProbe(
        parts.name,
        parts.token(),
        new Map([...readings].map(([index, reading]) => [index, encodeDeviceReading(reading)])),
      );
      if (!recorded) return;
    } catch (error) {
      parts.logger.warn(`Could not record the GPU probe: ${(error as Error).message}`);
      return;
    }
    if (this.report(readings)) parts.freed();
  }

  /** Logs each device whose state changed; true when one became usable. */
  private report(readings: Map<number, DeviceReading>): boolean {
    let freed = false;
    for (const [index, reading] of readings) {
      const last = this.last.get(index);
      const before = last?.state ?? 'ok';
      // A busy device's memory changes at every probe; a lost one's cause is news (one device, then the driver).
      if (reading.state === before && (before !== 'lost' || reading.why === last?.why)) continue;
      if (reading.state === 'ok') {
        freed = true;
        this.parts.logger.info(`GPU ${index} is usable again${before === 'lost' ? ': nvidia-smi reaches it' : ''}`);
      } else {
        this.parts.logger.warn(`GPU ${index} is ${reading.state}: ${reading.why ?? ''}; no run is placed on it until that changes`);
      }
    }
    this.last = readings;
    return freed;
  }
}

/** How the processes of a worker's runs are known: run token -> run id, process group -> run id. */
export interface RunMarks {
  tokens: Map<string, string>;
  groups: Map<number, string>;
}

/** The worker's run a process belongs to: by the run token in its environment, or a run's process group. */
async function runOf(pid: number, marks: RunMarks): Promise<string | undefined> {
  const token = await readRunToken(pid);
  const byToken = token === undefined ? undefined : marks.tokens.get(token);
  if (byToken !== undefined) return byToken;
  const group = await processGroup(pid);
  return group === undefined ? undefined : marks.groups.get(group);
}

/** A process's group (field 5 of /proc/PID/stat, after the name in parentheses), if it can be read. */
async function processGroup(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  const group = Number(fields?.[2]);
  return Number.isInteger(group) && group > 0 ? group : undefined;
}
