/**
 * What a run used, as `sacct` reports it: CPU time (user and system, of
 * every process of the run), peak memory, wall time, and on GPU workers the
 * peak memory its processes held on each device as the probe read it. Its
 * worker measures it (src/worker/usage/) and stores it with the run (the
 * job hash's `usage`, a JSON array: encodeRunUsage) while it runs and when it ends; each attempt
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

/**
 * How a usage is stored: a JSON array, its measures by position, so a
 * short run's stays within a listpack value (64 bytes: a finished run's
 * job hash then takes about 1.1 KB rather than 1.9 KB; see
 * docs/benchmarks.md, "Bytes per run"): source ("c" cgroup, "s" sampled),
 * wall ms, user ms, system ms, peak bytes, samples, then, where there are
 * any, memory limit, cpu limit, OOM kills and GPU peaks by device (null
 * where absent). `["s",2873,2610,210,165601280,3]`.
 */
const STORED_SOURCE = { cgroup: 'c', sampled: 's' } as const satisfies Record<UsageSource, string>;

/** A stored usage read back: the array above, or the object an earlier fitq stored; undefined for anything else. */
export function decodeRunUsage(value: unknown): RunUsage | undefined {
  if (Array.isArray(value)) return decodeStored(value);
  if (value === null || typeof value !== 'object') return undefined;
  const stored = value as Record<string, unknown>;
  return decodeStored([
    stored.source === 'cgroup' ? 'c' : stored.source === 'sampled' ? 's' : undefined,
    stored.wallMs, stored.cpuUserMs, stored.cpuSystemMs, stored.peakMemoryBytes, stored.samples,
    stored.memoryLimitBytes, stored.cpuLimit, stored.oomKills, stored.gpuPeakBytes,
  ]);
}

function decodeStored(stored: readonly unknown[]): RunUsage | undefined {
  const source = stored[0] === 'c' ? 'cgroup' : stored[0] === 's' ? 'sampled' : undefined;
  const [wallMs, cpuUserMs, cpuSystemMs, peakMemoryBytes, samples, memoryLimitBytes, cpuLimit, oomKills] = stored.slice(1, 9).map(count);
  if (source === undefined || wallMs === undefined || cpuUserMs === undefined || cpuSystemMs === undefined || peakMemoryBytes === undefined) return undefined;
  const usage: RunUsage = { source, wallMs, cpuUserMs, cpuSystemMs, peakMemoryBytes };
  const gpuPeaks = stored[9];
  if (gpuPeaks !== null && typeof gpuPeaks === 'object' && !Array.isArray(gpuPeaks)) {
    const peaks = Object.entries(gpuPeaks as Record<string, unknown>).flatMap(([device, bytes]) => {
      const peak = count(bytes);
      return peak === undefined ? [] : [[device, peak] as const];
    });
    if (peaks.length > 0) usage.gpuPeakBytes = Object.fromEntries(peaks);
  }
  if (samples !== undefined) usage.samples = samples;
  if (memoryLimitBytes !== undefined) usage.memoryLimitBytes = memoryLimitBytes;
  if (cpuLimit !== undefined) usage.cpuLimit = cpuLimit;
  if (oomKills !== undefined) usage.oomKills = oomKills;
  return usage;
}

/** The array a worker stores (see STORED_SOURCE): whole milliseconds and bytes, trailing absent measures left out. */
export function encodeRunUsage(usage: RunUsage): string {
  const stored: unknown[] = [
    STORED_SOURCE[usage.source],
    Math.round(usage.wallMs),
    Math.round(usage.cpuUserMs),
    Math.round(usage.cpuSystemMs),
    Math.round(usage.peakMemoryBytes),
    usage.samples ?? null,
    usage.memoryLimitBytes ?? null,
    usage.cpuLimit ?? null,
    usage.oomKills ?? null,
    usage.gpuPeakBytes ?? null,
  ];
  while (stored.length > 5 && stored[stored.length - 1] === null) stored.pop();
  return JSON.stringify(stored);
}

/** Why a run its memory limit ended failed: `out of memory: peak 8.0G, limit 8G`. */
export function outOfMemoryReason(usage: RunUsage): string {
  const limit = usage.memoryLimitBytes === undefined ? '' : `, limit ${formatHumanAmount(BigInt(Math.round(usage.memoryLimitBytes)) * MICROS_PER_UNIT)}`;
  return `out of memory: peak ${formatBytes(usage.peakMemoryBytes)}${limit}`;
}
