/**
 * What a run's processes use now, read from /proc where no cgroup counts for
 * it: every process of its session (a run starts a session of its own, so
 * its shells' job groups are in it too). CPU time is each process's own
 * plus what it counted of its children once they ended (cutime, cstime), so
 * a process that ended between readings is counted in its parent's; memory
 * is the resident set of all of them together.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcUsage {
  cpuUserMs: number;
  cpuSystemMs: number;
  memoryBytes: number;
}

/** `getconf NAME`, or `fallback` where there is none. */
function getconf(name: string, fallback: number): number {
  try {
    const value = Number(execFileSync('getconf', [name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return Number.isSafeInteger(value) && value > 0 ? value : fallback;
  } catch {
    return fallback;
  }
}

let units: { ticksPerSecond: number; pageBytes: number } | undefined;

/** Clock ticks (USER_HZ) and page size, asked once. */
function procUnits(): { ticksPerSecond: number; pageBytes: number } {
  units ??= { ticksPerSecond: getconf('CLK_TCK', 100), pageBytes: getconf('PAGESIZE', 4096) };
  return units;
}

/**
 * The usage of each of `sessions` now: one pass over /proc. Sessions with no
 * process left are missing from the map.
 */
export function readSessions(sessions: ReadonlySet<number>): Map<number, ProcUsage> {
  const found = new Map<number, ProcUsage>();
  if (sessions.size === 0) return found;
  const { ticksPerSecond, pageBytes } = procUnits();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp session … (fields counted after the comm, which may hold spaces and parentheses).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const session = Number(fields[3]);
    if (!sessions.has(session)) continue;
    const [utime, stime, cutime, cstime] = [fields[11], fields[12], fields[13], fields[14]].map(Number) as [number, number, number, number];
    const rss = Number(fields[21]);
    const usage = found.get(session) ?? { cpuUserMs: 0, cpuSystemMs: 0, memoryBytes: 0 };
    usage.cpuUserMs += ((utime + cutime) * 1000) / ticksPerSecond;
    usage.cpuSystemMs += ((stime + cstime) * 1000) / ticksPerSecond;
    usage.memoryBytes += rss * pageBytes;
    found.set(session, usage);
  }
  return found;
}
