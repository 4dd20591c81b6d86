/**
 * A worker's GPU probe settings (`--gpu-probe-interval`, `--gpu-ignore-process`,
 * `--gpu-foreign`), checked: what gpu-watch.ts probes with.
 */
import { UsageError } from '../errors.js';
import type { ForeignPolicy } from '../gpu/device-reading.js';
import type { IgnoredProcesses } from '../gpu/probe.js';
import { durationMs } from './duration-option.js';

/** The worker options (WorkerOptions) that say how its GPUs are probed. */
export interface GpuProbeFlags {
  /**
   * How often a worker with GPU devices asks nvidia-smi what they hold (ms;
   * 0: never, its own bookkeeping is trusted). Default 5,000. See gpu-watch.ts.
   */
  gpuProbeIntervalMs?: number;
  /** Compute processes (names or pids) that leave a device usable (`--gpu-ignore-process`), as gflow's ignore list. */
  gpuIgnoreProcesses?: readonly (string | number)[];
  /** `busy` (default): a device holding a process fitq did not start takes no run; `ignore`: trust fitq's bookkeeping only. */
  gpuForeign?: ForeignPolicy;
}

/** How the worker's GPUs are watched. */
export interface GpuProbeOptions {
  /** Between probes (ms); 0: no probe, the worker trusts its own bookkeeping. */
  intervalMs: number;
  ignored: IgnoredProcesses;
  foreign: ForeignPolicy;
}

/** The GPU probe's settings: an interval of at least a second (0: off), the ignore list by pid or name, the foreign policy. */
export function resolveGpuProbe(options: GpuProbeFlags, devices: readonly number[]): GpuProbeOptions {
  const given = options.gpuProbeIntervalMs ?? 5_000;
  const intervalMs = given === 0 ? 0 : durationMs('--gpu-probe-interval', given, 1_000);
  const names = new Set<string>();
  const pids = new Set<number>();
  for (const entry of options.gpuIgnoreProcesses ?? []) {
    const text = String(entry).trim();
    if (text === '') throw new UsageError('--gpu-ignore-process needs a process name or pid, got an empty value');
    if (/^\d+$/.test(text)) pids.add(Number(text));
    else names.add(text);
  }
  const foreign = options.gpuForeign ?? 'busy';
  if (foreign !== 'busy' && foreign !== 'ignore') throw new UsageError(`expected --gpu-foreign to be busy or ignore, got '${String(foreign)}'`);
  return { intervalMs: devices.length > 0 ? intervalMs : 0, ignored: { names, pids }, foreign };
}
