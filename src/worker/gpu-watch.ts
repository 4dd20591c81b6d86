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
import { deviceReadings, encodeDeviceReading, type DeviceReading, type ForeignPolicy } from '../gpu/device-reading.js';
import { probeNvidia, type IgnoredProcesses } from '../gpu/probe.js';
import type { Scripts } from '../queue/scripts.js';
import { readRunToken } from './escaped-sweep.js';

/** How the worker's GPUs are watched (`--gpu-probe-interval`, `--gpu-ignore-process`, `--gpu-foreign`). */
export interface GpuProbeOptions {
  /** Between probes (ms); 0: no probe, the worker trusts its own bookkeeping. */
  intervalMs: number;
  ignored: IgnoredProcesses;
  foreign: ForeignPolicy;
}

export interface GpuWatchParts {
  name: string;
  devices: readonly number[];
  probe: GpuProbeOptions;
  scripts: Scripts;
  logger: Logger;
  /** The current registration's token. */
  token: () => string;
  /** The tokens and process groups of the worker's runs. */
  runMarks: () => { tokens: Set<string>; groups: Set<number> };
  /** Called when a device became usable: the claim loop looks again. */
  freed: () => void;
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
    const result = await probeNvidia({
      isOwn: (pid) => isRunProcess(pid, marks),
      ignored: parts.probe.ignored,
      devices: parts.devices,
    });
    const readings = deviceReadings(result, parts.devices, parts.probe.foreign);
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

/** Whether a process is one of the worker's runs': its run token in its environment, or in a run's process group. */
async function isRunProcess(pid: number, marks: { tokens: Set<string>; groups: Set<number> }): Promise<boolean> {
  const token = await readRunToken(pid);
  if (token !== undefined && marks.tokens.has(token)) return true;
  const group = await processGroup(pid);
  return group !== undefined && marks.groups.has(group);
}

/** A process's group (field 5 of /proc/PID/stat, after the name in parentheses), if it can be read. */
async function processGroup(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  const group = Number(fields?.[2]);
  return Number.isInteger(group) && group > 0 ? group : undefined;
}
