/**
 * Why a staged run is not running yet, judged against the live workers.
 */
import { formatMicros } from '../resources/amount.js';
import type { Resources } from '../resources/spec.js';
import { poolShortfalls, type PoolState } from './pools.js';
import type { WorkerRecord } from './worker-record.js';

export interface WaitVerdict {
  /** True when some live worker could run it once it has room. */
  runnable: boolean;
  reason: string;
}

function shortfalls(demand: Resources, available: Resources): string[] {
  const short: string[] = [];
  for (const [name, amount] of demand) {
    const have = available.get(name) ?? 0n;
    if (amount > have) short.push(`${name}=${formatMicros(amount)} > ${formatMicros(have)}`);
  }
  return short;
}

/**
 * Explains why a run with these demands waits, given the live workers (and,
 * with its id, whether a worker holds resources for it).
 */
export function whyWaiting(
  fullDemand: Resources,
  workers: readonly WorkerRecord[],
  runId?: string,
  pool: PoolState = { capacity: new Map(), used: new Map() },
): WaitVerdict {
  if (workers.length === 0) return { runnable: false, reason: 'no live worker' };
  // Pool resources come from the pool, the rest from one worker.
  const demand = new Map([...fullDemand].filter(([name]) => !pool.capacity.has(name)));
  const pooled = new Map([...fullDemand].filter(([name]) => pool.capacity.has(name)));
  const overPool = shortfalls(pooled, pool.capacity);
  if (overPool.length > 0) return { runnable: false, reason: `needs more than the pool has: ${overPool.join(', ')}` };
  const names = [...demand.keys()];
  const undeclared = names.filter((name) => !workers.some((worker) => worker.capacity.has(name)));
  if (undeclared.length > 0) {
    return { runnable: false, reason: `no live worker has: ${undeclared.join(', ')}` };
  }
  const candidates = workers.filter((worker) => names.every((name) => worker.capacity.has(name)));
  if (candidates.length === 0) {
    return { runnable: false, reason: `no live worker has all of: ${names.join(', ')}` };
  }
  const byTotal = candidates.map((worker) => ({ worker, short: shortfalls(demand, worker.capacity) }));
  const fitting = byTotal.filter(({ short }) => short.length === 0).map(({ worker }) => worker);
  if (fitting.length === 0) {
    const closest = byTotal.sort((a, b) => a.short.length - b.short.length)[0];
    return { runnable: false, reason: `needs more than any live worker has: ${closest?.short.join(', ')}` };
  }
  const poolShort = poolShortfalls(pooled, pool);
  if (poolShort.length > 0) {
    const exhausted = poolShort.map((entry) => entry.split('=')[0]).join(', ');
    return { runnable: true, reason: `pool ${exhausted} exhausted (${poolShort.join(', ')})` };
  }
  const heldBy = runId === undefined ? undefined : fitting.find((worker) => worker.holding?.runId === runId);
  const byFree = fitting.map((worker) => ({ worker, short: shortfalls(demand, worker.free) }));
  if (heldBy) {
    const short = shortfalls(demand, heldBy.free);
    return { runnable: true, reason: `next in line on ${heldBy.name}: waiting for ${short.join(', ')} free` };
  }
  const fitsFree = byFree.filter(({ short }) => short.length === 0).map(({ worker }) => worker);
  if (fitsFree.length > 0) {
    // A worker holding an older blocked head lends only what that run leaves untouched.
    const unblocked = fitsFree.find((worker) => !worker.holding || shortfalls(demand, withoutHeld(worker)).length === 0);
    if (unblocked) return { runnable: true, reason: 'waiting for a worker to claim it' };
    return { runnable: true, reason: `held for older run ${fitsFree[0]!.holding!.runId}` };
  }
  const best = byFree.sort((a, b) => a.short.length - b.short.length)[0];
  return {
    runnable: true,
    reason: `waiting for resources: ${best?.short.join(', ')} free on ${best?.worker.name}`,
  };
}

/** A worker's free amounts less what its blocked head holds (may go below zero). */
function withoutHeld(worker: WorkerRecord): Resources {
  const left = new Map(worker.free);
  for (const [name, amount] of worker.holding?.demands ?? []) left.set(name, (left.get(name) ?? 0n) - amount);
  return left;
}
