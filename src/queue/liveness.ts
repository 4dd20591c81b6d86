/**
 * Whether a worker still answers, judged by the Redis server's clock like its
 * lease: a worker beats every lease/3, so one whose last heartbeat is older
 * than two beats has missed at least one and is shown as not responding
 * before its lease lapses and it is reaped.
 */

/** Epoch ms of the Redis server's clock, from a TIME reply (seconds, microseconds). */
export function serverTimeMs([seconds, micros]: readonly (string | number)[]): number {
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
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
}

export function judgeLiveness(heartbeatAt: number, leaseDeadline: number, leaseMs: number, serverNow: number): Liveness {
  const heartbeatAgeMs = Math.max(0, serverNow - heartbeatAt);
  const leaseLeftMs = leaseDeadline - serverNow;
  return { heartbeatAgeMs, leaseLeftMs, responding: leaseLeftMs >= 0 && heartbeatAgeMs <= MISSED_BEATS * heartbeatIntervalMs(leaseMs) };
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
  return `not responding (last heartbeat ${age}, ${lease})`;
}

/** A running run whose worker is not responding says so in its reason ("worker w1 not responding (…)"). */
export function withWorkerLiveness<R extends { worker?: string; reason?: string }>(
  run: R,
  workers: readonly { name: string; liveness: Liveness }[],
): R {
  const worker = workers.find((w) => w.name === run.worker);
  if (!worker || worker.liveness.responding) return run;
  return { ...run, reason: `worker ${worker.name} ${describeLiveness(worker.liveness)}` };
}
