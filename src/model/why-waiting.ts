/**
 * Why a staged run is not running yet, in words: the most telling obstacle
 * of a verdict of the explainRuns script (explain.ts), which judges the run
 * for every live worker by the claim's own policy. Only formats.
 */
import { projectOfOwner } from './project.js';
import { formatTimeLimit } from '../units/duration.js';
import { formatHumanAmount, MICROS_PER_UNIT } from '../resources/amount.js';
import { ARRAY_RESOURCE_PREFIX, arrayOfLimit } from '../resources/array-limit.js';
import type { HeadLack, HeldDevices, RunVerdict, Shortfall, WorkerVerdict } from './explain.js';

export interface WaitVerdict {
  /** True when some live worker could run it once it has room. */
  runnable: boolean;
  reason: string;
}

/** Why every staged run of a paused queue waits. */
export const PAUSED_REASON = 'the queue is paused (fitq resume)';

/** A run some live worker would start now: nothing keeps it but that worker's next claim. */
export const CAN_START = 'waiting for a worker to claim it';

const never = (reason: string): WaitVerdict => ({ runnable: false, reason });
const waits = (reason: string): WaitVerdict => ({ runnable: true, reason });

/** A shown amount: what there is, never below 0. */
const shown = (amount: bigint): string => formatHumanAmount(amount < 0n ? 0n : amount);
const plural = (ids: readonly number[]): string => `GPU device${ids.length > 1 ? 's' : ''} ${ids.join(',')}`;

/** "gpu=4 > 2" for each shortfall. */
function shortfalls(list: readonly Shortfall[]): string[] {
  return list.map(({ resource, need, have }) => `${resource}=${formatHumanAmount(need)} > ${shown(have)}`);
}

function unplaceableText(worker: WorkerVerdict): string {
  if (worker.gpumemOver) return `gpumem=${formatHumanAmount(worker.gpumemOver.need)} on one device, the largest GPU of ${worker.worker} has ${gigabytes(worker.gpumemOver.total)}`;
  const gpu = worker.unplaceable!;
  if (worker.migDevices && gpu > MICROS_PER_UNIT && gpu % MICROS_PER_UNIT === 0n) {
    return `gpu=${formatHumanAmount(gpu)} on whole GPUs: CUDA shows a process one MIG device at most, and ${worker.worker}'s ${worker.migDevices} MIG devices are not whole GPUs`;
  }
  return `gpu=${formatHumanAmount(gpu)} cannot be placed on GPU devices (use a whole number, or a fraction below 1)`;
}

/** Bytes (micros) in decimal gigabytes, one decimal, as gpumem demands are given: `30.0G`. */
function gigabytes(micros: bigint): string {
  return `${(Number(micros / MICROS_PER_UNIT) / 1e9).toFixed(1)}G`;
}

/** `; needs gpumem=82G on one device; GPU 1 has 30.0G free of 48.0G`, when memory is what the run lacks there. */
function memoryText(worker: WorkerVerdict): string {
  const memory = worker.gpumem;
  if (!memory || memory.free >= memory.need) return '';
  return `; needs gpumem=${formatHumanAmount(memory.need)} on one device; GPU ${memory.device} has ${gigabytes(memory.free < 0n ? 0n : memory.free)} free of ${gigabytes(memory.total)}`;
}

/**
 * How far a worker's capacity is from the run's demand: the sum over
 * resources of the missing fraction of each (gpu=8 on gpu=4 is 0.5), and 1
 * for a gpu demand its devices cannot take. The closest worker names the
 * shortfall.
 */
function relativeShortfall(worker: WorkerVerdict): number {
  let total = worker.unplaceable === undefined ? 0 : 1;
  for (const { need, have } of worker.over) total += Number(need - have) / Number(need);
  return total;
}

function describeHeldDevices(held: HeldDevices): string {
  const gpu = `gpu=${formatHumanAmount(held.gpu)}`;
  if (held.kind === 'pinned') return plural(held.pinned);
  if (held.kind === 'unplaceable') return `${gpu} on GPU devices, not free yet`;
  return `${gpu} on the GPU devices this run would take`;
}

/** What the worker's blocked head keeps from the run: by amount, and its devices; first what the head itself lacks, unless that is said. */
function heldReason(worker: WorkerVerdict): string {
  const held = worker.held!;
  const needs = held.needs.map(({ resource, need, have }) =>
    have < need ? `${resource}=${formatHumanAmount(need)}, ${shown(have)} free` : `${resource}=${formatHumanAmount(need)} of the ${shown(have)} free`,
  );
  if (held.devices) needs.push(describeHeldDevices(held.devices));
  // A lack the needs show already ("mem=32, 24 free", "gpu=1 on GPU devices, not free yet") is not said twice.
  const said = (lack: HeadLack) =>
    lack.kind === 'devices' ? held.devices?.kind === 'unplaceable' : lack.kind === 'worker' && held.needs.some(({ resource }) => resource === lack.shortfall.resource);
  return `held for older run ${held.runId} on ${worker.worker}: ${headWaits(worker, said)}${needs.join(', ')}${shadowNote(worker)}`;
}

/**
 * What a blocked head lacks, so that it cannot start itself, leading to
 * what it keeps from the run: "it waits for license=1 (0 free in the
 * pool), and needs ", or "it needs " when `said` says it all already.
 */
function headWaits(worker: WorkerVerdict, said: (lack: HeadLack) => boolean): string {
  const amount = ({ resource, need }: Shortfall) => `${resource}=${formatHumanAmount(need)}`;
  const lacks = (worker.headLacks ?? []).filter((lack) => !said(lack)).map((lack) => {
    if (lack.kind === 'devices') return 'free GPU devices';
    // An array's limit is the array's, never shown as a resource.
    if (isArrayLimit(lack.shortfall)) return `a free slot of array ${arrayOfLimit(lack.shortfall.resource)!}`;
    if (lack.kind === 'poolHeld') return `${amount(lack.shortfall)} (held for older run ${lack.holder})`;
    return `${amount(lack.shortfall)} (${shown(lack.shortfall.have)} free${lack.kind === 'pool' ? ' in the pool' : ''})`;
  });
  return lacks.length === 0 ? 'it needs ' : `it waits for ${lacks.join(', ')}, and needs `;
}

/** A span of ms as a limit is typed, in whole seconds above a second (`1m40s`, `450ms`). */
const span = (ms: number): string => formatTimeLimit(ms < 1000 ? Math.max(1, Math.ceil(ms)) : Math.ceil(ms / 1000) * 1000);

/** Whether, and why not, the run could go before the held head by its time limit (backfill). */
function shadowNote(worker: WorkerVerdict): string {
  const shadow = worker.shadow;
  // Without time limits in play, the rule of today: nothing to add.
  if (!shadow || (shadow.inMs === undefined && shadow.limit === undefined)) return '';
  if (shadow.inMs === undefined) return ` (when it can start is not known: a run on ${worker.worker} has no time limit)`;
  const when = `it can start in ${span(shadow.inMs)}`;
  if (shadow.limit === undefined) return ` (${when}: a run with a time limit within that could go first)`;
  return ` (${when}, before this run's time limit of ${formatTimeLimit(shadow.limit)} would end)`;
}

/**
 * A run its array's limit (the pool resource `array.<id>`) holds back, in
 * the array's words, never the resource's: `waiting for array ID (R of N
 * running)`, and who keeps the free share when an older run of the array
 * is held for (`keptFor`).
 */
function arrayWait(limit: Shortfall, keptFor?: { runId: string; worker: string }): WaitVerdict {
  const array = arrayOfLimit(limit.resource)!;
  const { capacity, have: free } = limit;
  if (capacity === undefined) return waits(`waiting for array ${array}`);
  if (capacity < limit.need) {
    return waits(`waiting for array ${array} (its limit is ${shown(capacity)}: fitq pool set ${ARRAY_RESOURCE_PREFIX}${array}=N lets its runs start)`);
  }
  const kept = keptFor ? `, the ${free === MICROS_PER_UNIT ? 'free one' : `${shown(free)} free`} kept for older run ${keptFor.runId} on ${keptFor.worker}` : '';
  return waits(`waiting for array ${array} (${shown(capacity - free)} of ${formatHumanAmount(capacity)} running${kept})`);
}

/**
 * A run its user's or its project's quota holds back (fitq quota): `waiting
 * for quota: alice uses gpu=2 of 2`, `waiting for quota: carol runs 1 of 1
 * at once`, `waiting for quota: project=vision uses gpu=4 of 4`; one the
 * quota can never let start says what would.
 */
function quotaWait({ user, name, need, used, limit }: NonNullable<RunVerdict['quota']>): WaitVerdict {
  const amount = formatHumanAmount;
  if (need > limit) {
    const quota = `${name}=${amount(limit)}`;
    // (A project's quota is set with --label: its owner is `project=<name>`.)
    const lets = `fitq quota set ${projectOfOwner(user) === undefined ? user : `--label ${user}`} ${name}=N lets it start`;
    if (name === 'running') return waits(`waiting for quota: ${user}'s quota is ${quota} (${lets})`);
    return waits(`waiting for quota: ${user}'s quota is ${quota}, and this run needs ${name}=${amount(need)} (${lets})`);
  }
  if (name === 'running') return waits(`waiting for quota: ${user} runs ${amount(used)} of ${amount(limit)} at once`);
  return waits(`waiting for quota: ${user} uses ${name}=${amount(used)} of ${amount(limit)}`);
}

/**
 * A run another user's newer runs go before, by fair share (fitq share):
 * `behind bob's runs by fair share: alice has used 3.2× their share, bob 0.4×`.
 */
function fairWait({ user, runUser, used, usedOf }: NonNullable<WorkerVerdict['fair']>): WaitVerdict {
  const times = (ratio: number): string => `${Number(ratio.toFixed(ratio < 10 ? 1 : 0))}×`;
  return waits(`behind ${user}'s runs by fair share: ${runUser} has used ${times(used)} their share, ${user} ${times(usedOf)} (fitq share)`);
}

const isArrayLimit = ({ resource }: Shortfall): boolean => arrayOfLimit(resource) !== undefined;

/**
 * What keeps the run off a worker whose capacity it fits, most telling
 * first; undefined when nothing does.
 */
function obstacleOn(worker: WorkerVerdict, pins: readonly number[]): { rank: number; reason: string } | undefined {
  if (worker.gpuWait) return { rank: 5, reason: `waiting for ${unusableText(worker)}${memoryText(worker)}` };
  if (worker.slots) {
    return { rank: 3, reason: `waiting for a run slot: ${worker.worker} runs its maximum of ${worker.slots.concurrency}` };
  }
  if (worker.fifoBlockedBy !== undefined) {
    return { rank: 2, reason: `behind older run ${worker.fifoBlockedBy} on ${worker.worker} (policy fifo)` };
  }
  if (worker.short.length > 0) {
    return { rank: 10 + worker.short.length, reason: `waiting for resources: ${shortfalls(worker.short).join(', ')} free on ${worker.worker}` };
  }
  if (worker.devicesBusy) {
    // Its runs hold some devices, and the probe finds others unusable: both are said.
    const unusable = worker.gpuUnusable.length > 0 ? `; ${unusableText(worker)}` : '';
    return { rank: 4, reason: `waiting for ${pins.length > 0 ? plural(pins) : 'free GPU devices'} on ${worker.worker}${unusable}${memoryText(worker)}` };
  }
  if (worker.held) return { rank: 2, reason: heldReason(worker) };
  return undefined;
}

/** `GPU 1: used by a process fitq did not start (pid 4242, python, 21.3 GiB) on w1`, for each device the worker's probe finds unusable. */
function unusableText(worker: WorkerVerdict): string {
  const devices = worker.gpuUnusable.map(({ device, state, why }) => `GPU ${device}: ${state === 'lost' ? 'lost, ' : ''}${why}`);
  return `${devices.join('; ')} on ${worker.worker}`;
}

/**
 * Explains why a run waits, from its verdict. A paused queue is the reason
 * unless `ignorePause` (for a warning about what could never run).
 */
export function whyWaiting(verdict: RunVerdict, options: { ignorePause?: boolean } = {}): WaitVerdict {
  if (verdict.paused && !options.ignorePause) {
    // A run that could never start is told why, paused or not.
    const resumed = whyWaiting(verdict, { ignorePause: true });
    return resumed.runnable ? waits(PAUSED_REASON) : never(`${resumed.reason}; ${PAUSED_REASON}`);
  }
  if (verdict.noWorker) {
    return never(verdict.drained.length > 0 ? `every live worker is drained: ${verdict.drained.join(', ')} (fitq undrain)` : 'no live worker');
  }
  const judged = judge(verdict);
  // Drained workers are not judged: one of them may be the only one that could run it.
  if (judged.runnable || verdict.drained.length === 0) return judged;
  return never(`${judged.reason}; drained: ${verdict.drained.join(', ')} (fitq undrain)`);
}

/** whyWaiting for a verdict with a live worker that is not drained. */
function judge(verdict: RunVerdict): WaitVerdict {
  // An array's limit below 1 (fitq pool set array.<id>=0) holds its runs back; it does not make them impossible.
  const poolOver = verdict.poolOver.filter((over) => !isArrayLimit(over));
  if (poolOver.length > 0) return never(`needs more than the pool has: ${shortfalls(poolOver).join(', ')}`);

  const workers = verdict.workers;
  const undeclared = verdict.own.filter((name) => workers.every((worker) => worker.missing.includes(name)));
  if (undeclared.length > 0) return never(`no live worker has: ${undeclared.join(', ')}`);
  const declaring = workers.filter((worker) => worker.missing.length === 0);
  if (declaring.length === 0) return never(`no live worker has all of: ${verdict.own.join(', ')}`);

  const pinnable = declaring.filter((worker) => worker.noDevice.length === 0);
  if (pinnable.length === 0) {
    const missing = verdict.pins.filter((id) => declaring.every((worker) => worker.noDevice.includes(id)));
    return never(`no live worker has ${plural(missing.length > 0 ? missing : verdict.pins)}`);
  }

  const limited = pinnable.filter((worker) => worker.overLimit === undefined);
  if (limited.length === 0) {
    const { limit } = pinnable[0]!.overLimit!;
    const longest = Math.max(...pinnable.map((worker) => worker.overLimit!.max));
    return never(`its time limit of ${formatTimeLimit(limit)} is above every live worker's --max-time-limit (the longest is ${formatTimeLimit(longest)})`);
  }
  const fitting = limited.filter((worker) => worker.over.length === 0 && worker.unplaceable === undefined);
  if (fitting.length === 0) {
    const closest = [...pinnable].sort((a, b) => relativeShortfall(a) - relativeShortfall(b))[0]!;
    const short = [...shortfalls(closest.over), ...(closest.unplaceable === undefined ? [] : [unplaceableText(closest)])];
    return never(`needs more than any live worker has: ${short.join(', ')}`);
  }

  if (verdict.quota) return quotaWait(verdict.quota);
  const stopped = verdict.poolOver.find(isArrayLimit);
  if (stopped) return arrayWait({ ...stopped, capacity: stopped.have });
  const throttle = verdict.poolShort.find(isArrayLimit);
  if (throttle) return arrayWait(throttle);
  if (verdict.poolShort.length > 0) {
    const exhausted = verdict.poolShort.map(({ resource }) => resource).join(', ');
    const short = verdict.poolShort.map(({ resource, need, have }) => `${resource}=${formatHumanAmount(need)} > ${shown(have)} free`);
    return waits(`pool ${exhausted} exhausted (${short.join(', ')})`);
  }
  const starting = fitting.filter((worker) => worker.starts);
  if (starting.length > 0) {
    // Beside a blocked head only because it ends first: say so.
    const backfills = starting.every((worker) => worker.backfills) ? starting[0]!.backfills : undefined;
    if (backfills) return waits(`${CAN_START} (backfills: ends before ${backfills.runId} can start, in ${span(backfills.inMs)})`);
    return waits(CAN_START);
  }
  const holder = fitting.find((worker) => worker.next);
  if (holder) {
    const awaited = holder.short.length > 0 ? `${shortfalls(holder.short).join(', ')} free` : 'its GPU devices';
    // Devices its probe finds unusable are part of what it waits for.
    if (holder.gpuUnusable.length > 0) return waits(`next in line on ${holder.worker}: waiting for ${awaited}; ${unusableText(holder)}${memoryText(holder)}`);
    if (holder.short.length === 0 && memoryText(holder)) return waits(`next in line on ${holder.worker}: waiting for ${awaited}${memoryText(holder)}`);
    return waits(`next in line on ${holder.worker}: waiting for ${awaited}`);
  }
  const poolHolder = fitting.find((worker) => worker.poolHeld);
  const arrayHeld = poolHolder?.poolHeld!.needs.find(isArrayLimit);
  if (arrayHeld) return arrayWait(arrayHeld, poolHolder!.poolHeld!);
  if (poolHolder) {
    const poolHeld = poolHolder.poolHeld!;
    const { resource, need, have } = poolHeld.needs[0]!;
    return waits(`held for older run ${poolHeld.runId} on ${poolHeld.worker}: ${headWaits(poolHolder, () => false)}${resource}=${formatHumanAmount(need)} of the pool's ${formatHumanAmount(have)} free`);
  }
  const fairHolder = fitting.find((worker) => worker.fair);
  if (fairHolder) return fairWait(fairHolder.fair!);
  const obstacles = fitting.map((worker) => obstacleOn(worker, verdict.pins));
  if (obstacles.some((obstacle) => obstacle === undefined)) return waits(CAN_START);
  const best = obstacles.sort((a, b) => a!.rank - b!.rank)[0]!;
  return waits(best.reason);
}
