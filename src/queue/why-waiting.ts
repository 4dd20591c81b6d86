/**
 * Why a staged run is not running yet, judged against the live workers and
 * the pool, the way the claim script would judge it.
 */
import { formatMicros, MICROS_PER_UNIT } from '../resources/amount.js';
import type { Resources } from '../resources/spec.js';
import { poolShortfalls, type PoolState } from './pools.js';
import type { WorkerRecord } from './worker-record.js';

export interface WaitVerdict {
  /** True when some live worker could run it once it has room. */
  runnable: boolean;
  reason: string;
}

export interface WaitingRun {
  /** Absent when judging a run about to be staged. */
  id?: string;
  demands: Resources;
  /** GPU devices the run is pinned to (`fitq stage --gpus`). */
  gpus?: readonly number[];
}

const EMPTY_POOL: PoolState = { capacity: new Map(), used: new Map() };
const never = (reason: string): WaitVerdict => ({ runnable: false, reason });
const waits = (reason: string): WaitVerdict => ({ runnable: true, reason });

function shortfalls(demand: Resources, available: Resources): string[] {
  const short: string[] = [];
  for (const [name, amount] of demand) {
    const have = available.get(name) ?? 0n;
    if (amount > have) short.push(`${name}=${formatMicros(amount)} > ${formatMicros(have < 0n ? 0n : have)}`);
  }
  return short;
}

/** The run's demand on one worker: a pinned run without a gpu demand takes its devices whole. */
function demandOn(worker: WorkerRecord, own: Resources, pinned: readonly number[]): Resources {
  if (worker.devices.size === 0 || pinned.length === 0 || own.has('gpu')) return own;
  return new Map([...own, ['gpu', BigInt(pinned.length) * MICROS_PER_UNIT]]);
}

/** Why a gpu demand can never go on this worker's devices, if it cannot. */
function unplaceable(demand: Resources, worker: WorkerRecord): string | undefined {
  const gpu = demand.get('gpu');
  if (worker.devices.size === 0 || gpu === undefined) return undefined;
  if (gpu > MICROS_PER_UNIT && gpu % MICROS_PER_UNIT !== 0n) {
    return `gpu=${formatMicros(gpu)} cannot be placed on GPU devices (use a whole number, or a fraction below 1)`;
  }
  return undefined;
}

/** Whether the devices the demand needs are free now on this worker. */
function devicesFree(demand: Resources, pinned: readonly number[], worker: WorkerRecord): boolean {
  const gpu = demand.get('gpu');
  if (worker.devices.size === 0 || gpu === undefined) return true;
  const whole = gpu % MICROS_PER_UNIT === 0n;
  const share = whole ? MICROS_PER_UNIT : gpu;
  const freeShares = [...worker.devices.values()];
  if (pinned.length > 0) return pinned.every((id) => (worker.devices.get(id) ?? 0n) >= share);
  if (whole) return freeShares.filter((free) => free === MICROS_PER_UNIT).length >= Number(gpu / MICROS_PER_UNIT);
  return freeShares.some((free) => free >= share);
}

/** A worker's free amounts less what its blocked head holds (may go below zero). */
function withoutHeld(worker: WorkerRecord): Resources {
  const left = new Map(worker.free);
  for (const [name, amount] of worker.holding?.demands ?? []) left.set(name, (left.get(name) ?? 0n) - amount);
  return left;
}

/**
 * What keeps the run off a worker whose capacity it fits, most telling
 * first; undefined when the worker could start it now.
 */
function obstacleOn(worker: WorkerRecord, run: WaitingRun, demand: Resources): { rank: number; reason: string } | undefined {
  const pinned = run.gpus ?? [];
  if (worker.concurrency > 0 && worker.runs.length >= worker.concurrency) {
    return { rank: 3, reason: `waiting for a run slot: ${worker.name} runs its maximum of ${worker.concurrency}` };
  }
  if (worker.policy === 'fifo' && worker.blockedBy !== undefined && worker.blockedBy !== run.id) {
    return { rank: 2, reason: `behind older run ${worker.blockedBy} on ${worker.name} (policy fifo)` };
  }
  const short = shortfalls(demand, worker.free);
  if (short.length > 0) return { rank: 10 + short.length, reason: `waiting for resources: ${short.join(', ')} free on ${worker.name}` };
  if (!devicesFree(demand, pinned, worker)) {
    const which = pinned.length > 0 ? `GPU device${pinned.length > 1 ? 's' : ''} ${pinned.join(',')}` : 'free GPU devices';
    return { rank: 4, reason: `waiting for ${which} on ${worker.name}` };
  }
  const holding = worker.holding;
  if (holding && holding.runId !== run.id && shortfalls(demand, withoutHeld(worker)).length > 0) {
    return { rank: 2, reason: `held for older run ${holding.runId}` };
  }
  return undefined;
}

/** Explains why a run waits, given the live workers and the pool. */
export function whyWaiting(run: WaitingRun, workers: readonly WorkerRecord[], pool: PoolState = EMPTY_POOL): WaitVerdict {
  if (workers.length === 0) return never('no live worker');
  // Pool resources come from the pool, the rest from one worker.
  const own = new Map([...run.demands].filter(([name]) => !pool.capacity.has(name)));
  const pooled = new Map([...run.demands].filter(([name]) => pool.capacity.has(name)));
  const overPool = shortfalls(pooled, pool.capacity);
  if (overPool.length > 0) return never(`needs more than the pool has: ${overPool.join(', ')}`);

  const names = [...own.keys()];
  const undeclared = names.filter((name) => !workers.some((worker) => worker.capacity.has(name)));
  if (undeclared.length > 0) return never(`no live worker has: ${undeclared.join(', ')}`);
  const declaring = workers.filter((worker) => names.every((name) => worker.capacity.has(name)));
  if (declaring.length === 0) return never(`no live worker has all of: ${names.join(', ')}`);

  const pinned = run.gpus ?? [];
  const pinnable = declaring.filter((worker) => worker.devices.size === 0 || pinned.every((id) => worker.devices.has(id)));
  if (pinnable.length === 0) {
    const missing = pinned.filter((id) => !declaring.some((worker) => worker.devices.has(id)));
    const listed = missing.length > 0 ? missing : pinned;
    return never(`no live worker has GPU device${listed.length > 1 ? 's' : ''} ${listed.join(',')}`);
  }

  const byTotal = pinnable.map((worker) => {
    const demand = demandOn(worker, own, pinned);
    const cannotPlace = unplaceable(demand, worker);
    return { worker, demand, short: [...shortfalls(demand, worker.capacity), ...(cannotPlace ? [cannotPlace] : [])] };
  });
  const fitting = byTotal.filter(({ short }) => short.length === 0);
  if (fitting.length === 0) {
    const closest = [...byTotal].sort((a, b) => a.short.length - b.short.length)[0]!;
    return never(`needs more than any live worker has: ${closest.short.join(', ')}`);
  }

  const poolShort = poolShortfalls(pooled, pool);
  if (poolShort.length > 0) {
    const exhausted = poolShort.map((entry) => entry.split('=')[0]).join(', ');
    return waits(`pool ${exhausted} exhausted (${poolShort.join(', ')})`);
  }
  const holder = fitting.find(({ worker }) => worker.holding?.runId === run.id);
  if (holder) {
    const short = shortfalls(holder.demand, holder.worker.free);
    const awaited = short.length > 0 ? `${short.join(', ')} free` : 'its GPU devices';
    return waits(`next in line on ${holder.worker.name}: waiting for ${awaited}`);
  }
  const obstacles = fitting.map(({ worker, demand }) => obstacleOn(worker, run, demand));
  if (obstacles.some((obstacle) => obstacle === undefined)) return waits('waiting for a worker to claim it');
  const best = obstacles.sort((a, b) => a!.rank - b!.rank)[0]!;
  return waits(best.reason);
}
