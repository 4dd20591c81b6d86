/**
 * What a run used, as `sacct` reports it: CPU time (user and system, of
 * every process of the run), peak memory, wall time, and on GPU workers the
 * peak memory its processes held on each device as the probe read it. Its
 * worker measures it (src/worker/usage/) and stores it with the run (the
 * job hash's `usage`, JSON) while it runs and when it ends; each attempt
 * keeps its own.
 */
import { formatBytes } from '../units/bytes.js';
import { formatHumanAmount, MICROS_PER_UNIT } from '../resources/amount.js';

/**
 * How it was measured: `cgroup`, the kernel's own count for the run's
 * cgroup (exact: every process, however short-lived); `sampled`, the run's
 * processes read from /proc every USAGE_SAMPLE_MS (what lived and ended
 * between two readings is missed), as Slurm's jobacct_gather/linux does.
 */
export type UsageSource = 'cgroup' | 'sampled';

export interface RunUsage {
  source: UsageSource;
  /** Wall time so far, or in all once it ended. */
  wallMs: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  /** Peak resident memory of all its processes together. */
  peakMemoryBytes: number;
  /** Peak GPU memory its processes held, per device (as the worker names it: "0", "1", a MIG slice's id). */
  gpuPeakBytes?: Record<string, number>;
  /** The limits its cgroup held it to (`fitq worker --enforce`), if any. */
  memoryLimitBytes?: number;
  cpuLimit?: number;
  /** Processes of it the kernel killed for want of memory under its limit. */
  oomKills?: number;
  /** `sampled`: how many readings found its processes (none: it ended before the first, and its CPU time and memory are unknown). */
  samples?: number;
}

/** How often a run's processes are read when no cgroup counts for it. */
export const USAGE_SAMPLE_MS = 1000;

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** A stored usage read back; undefined for anything that is not one (written by hand, or by a fitq that knew none). */
export function decodeRunUsage(value: unknown): RunUsage | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const stored = value as Record<string, unknown>;
  const source = stored.source === 'cgroup' || stored.source === 'sampled' ? stored.source : undefined;
  const [wallMs, cpuUserMs, cpuSystemMs, peakMemoryBytes] = [stored.wallMs, stored.cpuUserMs, stored.cpuSystemMs, stored.peakMemoryBytes].map(count);
  if (source === undefined || wallMs === undefined || cpuUserMs === undefined || cpuSystemMs === undefined || peakMemoryBytes === undefined) return undefined;
  const usage: RunUsage = { source, wallMs, cpuUserMs, cpuSystemMs, peakMemoryBytes };
  if (stored.gpuPeakBytes !== null && typeof stored.gpuPeakBytes === 'object') {
    const peaks = Object.entries(stored.gpuPeakBytes as Record<string, unknown>).flatMap(([device, bytes]) => {
      const peak = count(bytes);
      return peak === undefined ? [] : [[device, peak] as const];
    });
    if (peaks.length > 0) usage.gpuPeakBytes = Object.fromEntries(peaks);
  }
  const memoryLimitBytes = count(stored.memoryLimitBytes);
  const cpuLimit = count(stored.cpuLimit);
  const oomKills = count(stored.oomKills);
  const samples = count(stored.samples);
  if (samples !== undefined) usage.samples = samples;
  if (memoryLimitBytes !== undefined) usage.memoryLimitBytes = memoryLimitBytes;
  if (cpuLimit !== undefined) usage.cpuLimit = cpuLimit;
  if (oomKills !== undefined) usage.oomKills = oomKills;
  return usage;
}

/** The JSON a worker stores: whole milliseconds and bytes. */
export function encodeRunUsage(usage: RunUsage): string {
  return JSON.stringify({
    ...usage,
    wallMs: Math.round(usage.wallMs),
    cpuUserMs: Math.round(usage.cpuUserMs),
    cpuSystemMs: Math.round(usage.cpuSystemMs),
    peakMemoryBytes: Math.round(usage.peakMemoryBytes),
  });
}

/** Why a run its memory limit ended failed: `out of memory: peak 8.0G, limit 8G`. */
export function outOfMemoryReason(usage: RunUsage): string {
  const limit = usage.memoryLimitBytes === undefined ? '' : `, limit ${formatHumanAmount(BigInt(Math.round(usage.memoryLimitBytes)) * MICROS_PER_UNIT)}`;
  return `out of memory: peak ${formatBytes(usage.peakMemoryBytes)}${limit}`;
}
