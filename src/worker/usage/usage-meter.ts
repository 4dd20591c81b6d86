/**
 * What each of a worker's runs uses, measured while it runs (see
 * model/run-usage.ts): by the run's cgroup where the worker has cgroups
 * (`--enforce`, see cgroup-host.ts), which also holds the run to its
 * demands; else by reading its processes from /proc every USAGE_SAMPLE_MS,
 * one pass for all its runs. The GPU probe adds what the run's processes
 * hold on each device.
 */
import type { Logger } from 'pino';
import { USAGE_SAMPLE_MS, type RunUsage } from '../../model/run-usage.js';
import type { Resources } from '../../resources/spec.js';
import { MICROS_PER_UNIT, microsToNumber } from '../../resources/amount.js';
import { closeCgroupLayout, type CgroupLayout, type Enforced } from './cgroup-host.js';
import { readSessions } from './proc-usage.js';
import { RunCgroup, type CgroupLimits } from './run-cgroup.js';

interface Metered {
  cgroup?: RunCgroup;
  limits: CgroupLimits;
  /** The run's session (its first process's pid), once it runs. */
  session?: number;
  startedAtMs?: number;
  endedAtMs?: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  peakMemoryBytes: number;
  gpuPeakBytes: Map<string, number>;
  /** Readings of /proc that found its processes. */
  samples: number;
}

/** The limits a run's demands set under `enforce`: `mem` in bytes, `cpu` in CPUs. */
export function limitsOf(demands: Resources, enforce: ReadonlySet<Enforced>): CgroupLimits {
  const mem = demands.get('mem');
  const cpu = demands.get('cpu');
  return {
    ...(enforce.has('mem') && mem !== undefined && mem > 0n ? { memoryBytes: Number(mem / MICROS_PER_UNIT) } : {}),
    ...(enforce.has('cpu') && cpu !== undefined && cpu > 0n ? { cpu: microsToNumber(cpu) } : {}),
  };
}

export class UsageMeter {
  private readonly runs = new Map<string, Metered>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    /** The worker's cgroups, when it has them. */
    private readonly layout: CgroupLayout | undefined,
    private readonly enforce: ReadonlySet<Enforced>,
    private readonly logger: Logger,
  ) {}

  /**
   * Before a run's process is spawned: its cgroup, with its limits, made
   * where the worker has cgroups. Returns the files its process joins the
   * cgroup by (none without cgroups); throws if the kernel refuses the cgroup.
   */
  prepare(runId: string, epoch: string, demands: Resources): string[] {
    const limits = limitsOf(demands, this.enforce);
    const metered: Metered = { limits, cpuUserMs: 0, cpuSystemMs: 0, peakMemoryBytes: 0, gpuPeakBytes: new Map(), samples: 0 };
    if (this.layout) metered.cgroup = RunCgroup.create(this.layout, `${runId}.${epoch}`, limits);
    this.runs.set(runId, metered);
    return metered.cgroup?.procsFiles ?? [];
  }

  /** Its process runs, in session `session`: measured from now. */
  started(runId: string, session: number): void {
    const metered = this.runs.get(runId);
    if (!metered) return;
    metered.session = session;
    metered.startedAtMs = performance.now();
    if (!metered.cgroup) this.timer ??= setInterval(() => this.sample(), USAGE_SAMPLE_MS).unref();
  }

  /** What the GPU probe read of the run's processes on a device: its peak is kept. */
  gpuMemory(runId: string, device: string, bytes: number): void {
    const metered = this.runs.get(runId);
    if (metered) metered.gpuPeakBytes.set(device, Math.max(metered.gpuPeakBytes.get(device) ?? 0, bytes));
  }

  /** One pass over /proc for every sampled run. */
  private sample(): void {
    const sampled = [...this.runs.values()].filter((metered) => !metered.cgroup && metered.session !== undefined && metered.endedAtMs === undefined);
    if (sampled.length === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const now = readSessions(new Set(sampled.map((metered) => metered.session!)));
    for (const metered of sampled) {
      const usage = now.get(metered.session!);
      if (!usage) continue;
      metered.samples += 1;
      // A process that ended without a parent in the run to count it leaves the total: the most seen is kept.
      metered.cpuUserMs = Math.max(metered.cpuUserMs, usage.cpuUserMs);
      metered.cpuSystemMs = Math.max(metered.cpuSystemMs, usage.cpuSystemMs);
      metered.peakMemoryBytes = Math.max(metered.peakMemoryBytes, usage.memoryBytes);
    }
  }

  /** What the run used so far (or in all, once it ended); undefined for a run not measured here. */
  usage(runId: string): RunUsage | undefined {
    const metered = this.runs.get(runId);
    if (!metered || metered.startedAtMs === undefined) return undefined;
    const counts = metered.cgroup?.read();
    const usage: RunUsage = {
      source: metered.cgroup ? 'cgroup' : 'sampled',
      wallMs: (metered.endedAtMs ?? performance.now()) - metered.startedAtMs,
      cpuUserMs: counts?.cpuUserMs ?? metered.cpuUserMs,
      cpuSystemMs: counts?.cpuSystemMs ?? metered.cpuSystemMs,
      peakMemoryBytes: counts?.peakMemoryBytes ?? metered.peakMemoryBytes,
    };
    if (metered.gpuPeakBytes.size > 0) usage.gpuPeakBytes = Object.fromEntries(metered.gpuPeakBytes);
    if (metered.limits.memoryBytes !== undefined) usage.memoryLimitBytes = metered.limits.memoryBytes;
    if (metered.limits.cpu !== undefined) usage.cpuLimit = metered.limits.cpu;
    if (counts && counts.oomKills > 0) usage.oomKills = counts.oomKills;
    if (!metered.cgroup) usage.samples = metered.samples;
    return usage;
  }

  /** Every run measured now, with its usage so far. */
  running(): Map<string, RunUsage> {
    const all = new Map<string, RunUsage>();
    for (const runId of this.runs.keys()) {
      const usage = this.usage(runId);
      if (usage) all.set(runId, usage);
    }
    return all;
  }

  /**
   * The run's process has exited (its group is gone): its usage in all, and
   * its cgroup removed, with whatever escaped into it killed first. The run
   * is measured no more.
   */
  async finish(runId: string): Promise<RunUsage | undefined> {
    const metered = this.runs.get(runId);
    if (!metered) return undefined;
    metered.endedAtMs ??= performance.now();
    const usage = this.usage(runId);
    this.runs.delete(runId);
    if (metered.cgroup && !(await metered.cgroup.remove())) {
      this.logger.warn(`The cgroup of run ${runId} could not be removed: something of the run is still in it`);
    }
    return usage;
  }

  /** The worker stops: its own cgroup directories go (its runs' are gone by now). */
  close(): void {
    clearInterval(this.timer);
    if (this.layout) closeCgroupLayout(this.layout);
  }
}
