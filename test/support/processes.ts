/** Whether test processes are still there, read from the kernel. */
import { readFileSync } from 'node:fs';

/** True while `pid` is a running process: not gone, and not a zombie waiting to be reaped. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    // Gone since the signal check; without /proc, the signal check is all there is.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT' || !process.platform.startsWith('linux');
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  return state !== 'Z' && state !== 'X';
}

/**
 * A process group a test started, remembered to be killed after it should
 * the test fail: its id (its leader's pid) and when its leader started. A
 * group's id comes round again once the group is gone (pid_max is 32768 on
 * many machines, and a test run starts tens of thousands of processes):
 * killing a remembered id blindly killed other tests' process groups.
 */
export interface RememberedGroup {
  pgid: number;
  startedAt: string | undefined;
}

/** When a process started, in clock ticks since boot (/proc/PID/stat, field 22), or undefined when it is gone. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

export function rememberGroup(pgid: number): RememberedGroup {
  return { pgid, startedAt: startTimeOf(pgid) };
}

/**
 * Kills the group with SIGKILL while it is still the one remembered: its
 * leader the same process, or the leader gone (members of its group keep
 * its id from being handed out again). An id that now names another
 * process is left alone.
 */
export function killRememberedGroup(group: RememberedGroup): void {
  const now = startTimeOf(group.pgid);
  if (now !== undefined && now !== group.startedAt) return;
  try {
    process.kill(-group.pgid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

/** A process a test started, remembered with its start time for the same reason as a group (see RememberedGroup). */
export function rememberProcess(pid: number): RememberedGroup {
  return rememberGroup(pid);
}

/** Kills the process with SIGKILL if it is still the one remembered (same pid, same start). */
export function killRememberedProcess(remembered: RememberedGroup): void {
  const now = startTimeOf(remembered.pgid);
  if (now === undefined || now !== remembered.startedAt) return;
  try {
    process.kill(remembered.pgid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}
