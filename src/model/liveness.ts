/**
 * Whether a worker still answers, judged by the Redis server's clock like its
 * lease: a worker beats every lease/3, so one whose last heartbeat is older
 * than two beats has missed at least one and is shown as not responding
 * before its lease lapses and it is reaped. On the worker's own machine a
 * process that is gone (kill -9) says so at once.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** Epoch ms of the Redis server's clock, from a TIME reply (seconds, microseconds). */
export function serverTimeMs([seconds, micros]: readonly (string | number)[]): number {
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Epoch µs of the Redis server's clock, from a TIME reply, as a decimal string (exact: past 2^53 in a few centuries). */
export function serverTimeMicros([seconds, micros]: readonly (string | number)[]): string {
  return `${seconds}${String(micros).padStart(6, '0')}`;
}

/** How often a worker renews its lease. */
export function heartbeatIntervalMs(leaseMs: number): number {
  return Math.max(100, leaseMs / 3);
}

/** Beats a worker may miss before it is shown as not responding. */
const MISSED_BEATS = 2;

export interface Liveness {
  /** Time since the last heartbeat, by the server's clock. */
  heartbeatAgeMs: number;
  /** Time until the lease lapses (negative: lapsed). */
  leaseLeftMs: number;
  responding: boolean;
  /** The pid of the worker's process when it is known to be gone (it ran on this machine). */
  goneProcess?: number;
}

/** `goneProcess`: the worker's pid when its process is known to be gone (see processGoneHere). */
export function judgeLiveness(heartbeatAt: number, leaseDeadline: number, leaseMs: number, serverNow: number, goneProcess?: number): Liveness {
  const heartbeatAgeMs = Math.max(0, serverNow - heartbeatAt);
  const leaseLeftMs = leaseDeadline - serverNow;
  const beating = leaseLeftMs >= 0 && heartbeatAgeMs <= MISSED_BEATS * heartbeatIntervalMs(leaseMs);
  return { heartbeatAgeMs, leaseLeftMs, responding: beating && goneProcess === undefined, ...(goneProcess === undefined ? {} : { goneProcess }) };
}

/**
 * Whether a worker registered from this machine (its host is this host
 * name) by `pid` is gone: no such process, or a zombie. A worker elsewhere,
 * or whose process lives, is judged by its heartbeats alone.
 */
export function processGoneHere(host: string, pid: number): boolean {
  if (host !== hostname() || !Number.isSafeInteger(pid) || pid <= 0) return false;
  return processExited(pid);
}

/**
 * Whether process `pid` of this machine has exited, as the kernel tells it
 * now: no such process, or a zombie (exited, its parent not yet told).
 */
export function processExited(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
  }
  try {
    // pid (comm) state …: the state follows the name, which may hold anything.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** "12s", "4m05s", "2h03m": whole seconds, rounded down. */
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

/** "3s ago", or "not responding (last heartbeat 12s ago, lease ends in 18s)". */
export function describeLiveness(liveness: Liveness): string {
  const age = `${formatAge(liveness.heartbeatAgeMs)} ago`;
  if (liveness.responding) return age;
  const lease = liveness.leaseLeftMs >= 0 ? `lease ends in ${formatAge(liveness.leaseLeftMs)}` : 'lease ran out';
  const gone = liveness.goneProcess === undefined ? '' : `its process ${liveness.goneProcess} on this machine is gone, `;
  return `not responding (${gone}last heartbeat ${age}, ${lease})`;
}

/**
 * A running run whose worker is not responding says so in its reason
 * ("worker w1 not responding (…)") and `workerResponding: false`.
 */
export function withWorkerLiveness<R extends { worker?: string; reason?: string; workerResponding?: boolean }>(
  run: R,
  workers: readonly { name: string; liveness: Liveness }[],
): R {
  const worker = workers.find((w) => w.name === run.worker);
  if (!worker || worker.liveness.responding) return run;
  return { ...run, reason: `worker ${worker.name} ${describeLiveness(worker.liveness)}`, workerResponding: false };
}
