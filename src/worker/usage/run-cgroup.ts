/**
 * One run's cgroup (a directory in each hierarchy the worker uses, see
 * cgroup-host.ts): made before its process starts, with the limits its
 * demands set when they are enforced; its process joins it before the
 * command runs (so every process of the run is in it, however it forks);
 * the kernel counts its CPU time, its peak memory and its OOM kills; once
 * the run has ended, whatever is left in it is killed and it is removed.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tryRmdir, type CgroupLayout } from './cgroup-host.js';

/** The scheduler's period for a CPU quota: a run with cpu=1.5 may use 150 ms of CPU every 100 ms. */
const CPU_PERIOD_US = 100_000;

export interface CgroupLimits {
  memoryBytes?: number;
  cpu?: number;
}

export interface CgroupCounts {
  cpuUserMs: number;
  cpuSystemMs: number;
  peakMemoryBytes: number;
  oomKills: number;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** `key value` lines (memory.oom_control, cpu.stat, memory.events) as numbers. */
function keyedNumbers(text: string | undefined): Map<string, number> {
  return new Map((text ?? '').split('\n').flatMap((line) => {
    const [key, value] = line.trim().split(/\s+/);
    return key && value !== undefined && /^\d+$/.test(value) ? [[key, Number(value)] as const] : [];
  }));
}

export class RunCgroup {
  private readonly dirs: string[];
  /** v2 kernels before 5.19 have no memory.peak: the highest memory.current read is kept instead. */
  private highestCurrent = 0;

  private constructor(
    private readonly layout: CgroupLayout,
    private readonly memoryDir: string,
    private readonly cpuacctDir: string,
    cpuDir: string | undefined,
  ) {
    this.dirs = [...new Set([memoryDir, cpuacctDir, ...(cpuDir ? [cpuDir] : [])])];
  }

  /** Makes the run's cgroup `name` with these limits; throws (an errno error) if the kernel refuses. */
  static create(layout: CgroupLayout, name: string, limits: CgroupLimits): RunCgroup {
    const dir = (parent: string) => join(parent, name);
    const cgroup = new RunCgroup(layout, dir(layout.memory), dir(layout.cpuacct), layout.cpu ? dir(layout.cpu) : undefined);
    try {
      for (const made of cgroup.dirs) mkdirSync(made);
      cgroup.limit(limits, layout.cpu ? dir(layout.cpu) : undefined);
    } catch (error) {
      for (const made of cgroup.dirs) tryRmdir(made);
      throw error;
    }
    return cgroup;
  }

  private limit({ memoryBytes, cpu }: CgroupLimits, cpuDir: string | undefined): void {
    const v1 = this.layout.version === 1;
    if (memoryBytes !== undefined) {
      const bytes = String(Math.max(4096, Math.floor(memoryBytes)));
      writeFileSync(join(this.memoryDir, v1 ? 'memory.limit_in_bytes' : 'memory.max'), bytes);
      // Swap does not lift the limit: memory and swap together are held to it (v1), no swap at all (v2).
      const swap = join(this.memoryDir, v1 ? 'memory.memsw.limit_in_bytes' : 'memory.swap.max');
      if (existsSync(swap)) writeFileSync(swap, v1 ? bytes : '0');
    }
    if (cpu !== undefined && cpuDir !== undefined) {
      const quota = Math.max(1000, Math.round(cpu * CPU_PERIOD_US));
      if (v1) {
        writeFileSync(join(cpuDir, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
        writeFileSync(join(cpuDir, 'cpu.cfs_quota_us'), String(quota));
      } else {
        writeFileSync(join(cpuDir, 'cpu.max'), `${quota} ${CPU_PERIOD_US}`);
      }
    }
  }

  /** The files a process writes its pid to, to join the run's cgroup in every hierarchy. */
  get procsFiles(): string[] {
    return this.dirs.map((dir) => join(dir, 'cgroup.procs'));
  }

  /** What the kernel counted for the run so far. */
  read(): CgroupCounts {
    if (this.layout.version === 1) {
      const nanos = (file: string) => Number(readText(join(this.cpuacctDir, file)) ?? 0);
      return {
        cpuUserMs: nanos('cpuacct.usage_user') / 1e6,
        cpuSystemMs: nanos('cpuacct.usage_sys') / 1e6,
        peakMemoryBytes: Number(readText(join(this.memoryDir, 'memory.max_usage_in_bytes')) ?? 0),
        oomKills: keyedNumbers(readText(join(this.memoryDir, 'memory.oom_control'))).get('oom_kill') ?? 0,
      };
    }
    const cpu = keyedNumbers(readText(join(this.cpuacctDir, 'cpu.stat')));
    const peak = readText(join(this.memoryDir, 'memory.peak'));
    this.highestCurrent = Math.max(this.highestCurrent, Number(readText(join(this.memoryDir, 'memory.current')) ?? 0));
    return {
      cpuUserMs: (cpu.get('user_usec') ?? 0) / 1000,
      cpuSystemMs: (cpu.get('system_usec') ?? 0) / 1000,
      peakMemoryBytes: peak === undefined ? this.highestCurrent : Number(peak),
      oomKills: keyedNumbers(readText(join(this.memoryDir, 'memory.events'))).get('oom_kill') ?? 0,
    };
  }

  /** The processes still in it. */
  private members(): number[] {
    return [...new Set(this.dirs.flatMap((dir) => (readText(join(dir, 'cgroup.procs')) ?? '').split('\n').filter(Boolean).map(Number)))];
  }

  /**
   * Kills whatever of the run is left in it (what escaped its process group
   * and session is still here), waits for the kernel to let it go, and
   * removes it. Resolves false if it could not be removed in `withinMs`.
   */
  async remove(withinMs = 2000): Promise<boolean> {
    const until = performance.now() + withinMs;
    for (;;) {
      for (const pid of this.members()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      if (this.dirs.every((dir) => !existsSync(dir) || tryRmdir(dir))) return true;
      if (performance.now() >= until) return false;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}
