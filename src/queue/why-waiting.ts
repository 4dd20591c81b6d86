/**
 * Why a staged run is not running yet, judged against the live workers.
 */
import { formatMicros } from '../resources/amount.js';
import type { Resources } from '../resources/spec.js';
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

/** Explains why a run with these demands waits, given the live workers. */
export function whyWaiting(demand: Resources, workers: readonly WorkerRecord[]): WaitVerdict {
  if (workers.length === 0) return { runnable: false, reason: 'no live worker' };
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
  const byFree = fitting.map((worker) => ({ worker, short: shortfalls(demand, worker.free) }));
  if (byFree.some(({ short }) => short.length === 0)) {
    return { runnable: true, reason: 'waiting for a worker to claim it' };
  }
  const best = byFree.sort((a, b) => a.short.length - b.short.length)[0];
  return {
    runnable: true,
    reason: `waiting for resources: ${best?.short.join(', ')} free on ${best?.worker.name}`,
  };
}
