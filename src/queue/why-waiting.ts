/**
 * Why a staged run is not running yet, judged against the live workers and
 * the pool, the way the claim script would judge it.
 */
import { formatHumanAmount, MICROS_PER_UNIT } from '../resources/amount.js';
import type { Resources } from '../resources/spec.js';
import { heldDevices, placeOnDevices, type HeldDevices } from './placement.js';
import { poolShortfalls, type PoolState } from './pools.js';
import type { HeldRun, WorkerRecord } from './worker-record.js';

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
  /** Its place in the order; absent: after every staged run. */
  order?: { priority: number; seq: number };
}

/** Whether a blocked head comes before the run in the claim's order (higher priority, then older). */
function headFirst(head: HeldRun, run: WaitingRun): boolean {
  if (!run.order) return true;
  return head.priority !== run.order.priority ? head.priority > run.order.priority : head.seq < run.order.seq;
}

/**
 * The workers, with only the oldest hold among them: one blocked head per
 * namespace. A newer hold no longer counts (the claim ignores it, and its
 * worker drops it on its next claim), so that worker backfills freely.
 */
function oldestHoldOnly(workers: readonly WorkerRecord[]): WorkerRecord[] {
  let oldest: HeldRun | undefined;
  for (const { holding } of workers) {
    if (holding && (!oldest || headFirst(holding, { demands: new Map(), order: oldest }))) oldest = holding;
  }
  return workers.map((worker) => (worker.holding && worker.holding !== oldest ? { ...worker, holding: undefined } : worker));
}

const EMPTY_POOL: PoolState = { capacity: new Map(), used: new Map() };
const never = (reason: string): WaitVerdict => ({ runnable: false, reason });
const waits = (reason: string): WaitVerdict => ({ runnable: true, reason });

function shortfalls(demand: Resources, available: Resources): string[] {
  const short: string[] = [];
  for (const [name, amount] of demand) {
    const have = available.get(name) ?? 0n;
    if (amount > have) short.push(`${name}=${formatHumanAmount(amount)} > ${formatHumanAmount(have < 0n ? 0n : have)}`);
  }
  return short;
}

/**
 * How far a worker's capacity is from a demand: the sum over resources of
 * the missing fraction of each (gpu=8 on gpu=4 is 0.5), and 1 for a gpu
 * demand its devices cannot take. The closest worker names the shortfall.
 */
function relativeShortfall({ worker, demand }: { worker: WorkerRecord; demand: Resources }): number {
  let total = unplaceable(demand, worker) ? 1 : 0;
  for (const [name, amount] of demand) {
    const have = worker.capacity.get(name) ?? 0n;
    if (amount > have) total += Number(amount - have) / Number(amount);
  }
  return total;
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
    return `gpu=${formatHumanAmount(gpu)} cannot be placed on GPU devices (use a whole number, or a fraction below 1)`;
  }
  return undefined;
}

/** Whether the devices the demand needs are free now on this worker. */
function devicesFree(demand: Resources, pinned: readonly number[], worker: WorkerRecord): boolean {
  const gpu = demand.get('gpu');
  if (worker.devices.size === 0 || gpu === undefined) return true;
  return placeOnDevices({ gpu, pinned }, worker.devices, worker.gpuPlacement) !== undefined;
}

/**
 * Why the worker's blocked head keeps this run from starting beside it, as
 * the claim judges it, or undefined when it does not: of each resource the
 * head needs, what stays free must still cover it, and of one the head
 * still lacks the run may take nothing; on GPU devices, the head is held by
 * placement (see placement.ts).
 */
function heldBack(worker: WorkerRecord, demand: Resources, pinned: readonly number[]): string | undefined {
  const holding = worker.holding!;
  const head = demandOn(worker, holding.demands, holding.gpus);
  const onDevices = worker.devices.size > 0;
  const needs: string[] = [];
  for (const [name, amount] of demand) {
    const headNeeds = head.get(name);
    if (headNeeds === undefined || (onDevices && name === 'gpu')) continue;
    const free = worker.free.get(name) ?? 0n;
    if (amount > free - headNeeds) {
      const shown = formatHumanAmount(free < 0n ? 0n : free);
      needs.push(free < headNeeds ? `${name}=${formatHumanAmount(headNeeds)}, ${shown} free` : `${name}=${formatHumanAmount(headNeeds)} of the ${shown} free`);
    }
  }
  const headGpu = head.get('gpu');
  const gpu = demand.get('gpu');
  if (onDevices && headGpu !== undefined && gpu !== undefined) {
    const held = heldDevices({ gpu, pinned }, { gpu: headGpu, pinned: holding.gpus }, worker.devices, worker.gpuPlacement);
    if (held) needs.push(describeHeldDevices(held, headGpu));
  }
  return needs.length > 0 ? `held for older run ${holding.runId} on ${worker.name}: it needs ${needs.join(', ')}` : undefined;
}

function describeHeldDevices(held: HeldDevices, headGpu: bigint): string {
  const gpu = `gpu=${formatHumanAmount(headGpu)}`;
  if (held.kind === 'pinned') return `GPU device${held.ids.length > 1 ? 's' : ''} ${held.ids.join(',')}`;
  if (held.kind === 'unplaceable') return `${gpu} on GPU devices, not free yet`;
  return `${gpu} on the GPU devices this run would take`;
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
  if (worker.holding && worker.holding.runId !== run.id && headFirst(worker.holding, run)) {
    const held = heldBack(worker, demand, pinned);
    if (held) return { rank: 2, reason: held };
  }
  return undefined;
}

/**
 * Why older blocked heads keep the pool share this run needs, if they do:
 * the claim gives what they wait for to no later run, on any worker.
 */
function heldPoolShare(run: WaitingRun, pooled: Resources, workers: readonly WorkerRecord[], pool: PoolState): string | undefined {
  const heads = workers.flatMap((worker) =>
    worker.holding && worker.holding.runId !== run.id && headFirst(worker.holding, run) ? [{ worker, head: worker.holding }] : [],
  );
  for (const [name, amount] of pooled) {
    const free = pool.capacity.get(name)! - (pool.used.get(name) ?? 0n);
    const holders = heads.filter(({ head }) => head.demands.has(name));
    const held = holders.reduce((sum, { head }) => sum + head.demands.get(name)!, 0n);
    const first = holders[0];
    if (first && amount > free - held) {
      const needs = `${name}=${formatHumanAmount(first.head.demands.get(name)!)} of the pool's ${formatHumanAmount(free)} free`;
      return `held for older run ${first.head.runId} on ${first.worker.name}: it needs ${needs}`;
    }
  }
  return undefined;
}

/** Explains why a run waits, given the live workers and the pool. */
export function whyWaiting(run: WaitingRun, liveWorkers: readonly WorkerRecord[], pool: PoolState = EMPTY_POOL): WaitVerdict {
  if (liveWorkers.length === 0) return never('no live worker');
  const workers = oldestHoldOnly(liveWorkers);
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
    const closest = [...byTotal].sort((a, b) => relativeShortfall(a) - relativeShortfall(b))[0]!;
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
  const poolHeld = heldPoolShare(run, pooled, workers, pool);
  if (poolHeld) return waits(poolHeld);
  const obstacles = fitting.map(({ worker, demand }) => obstacleOn(worker, run, demand));
  if (obstacles.some((obstacle) => obstacle === undefined)) return waits('waiting for a worker to claim it');
  const best = obstacles.sort((a, b) => a!.rank - b!.rank)[0]!;
  return waits(best.reason);
}
