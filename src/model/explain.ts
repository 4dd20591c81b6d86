/**
 * The verdicts of the explainRuns script (lua/explainRuns-*.lua): for a
 * staged run, or one about to be staged, what every live worker's next
 * claim would do with it, judged by the claim's own policy. Amounts are
 * exact (micros); why-waiting.ts turns a verdict into words.
 */
import { parseDecimal } from '../resources/amount.js';

/** A resource a run needs more of than there is: its need and what there is (micros). */
export interface Shortfall {
  resource: string;
  need: bigint;
  have: bigint;
  /** The whole capacity, where the verdict gives it (poolShort, poolHeld). */
  capacity?: bigint;
}

/** How a blocked head keeps GPU devices from a later run (see includes/devices.lua placeBesideHead). */
export interface HeldDevices {
  /** `pinned`: the head's own devices; `unplaceable`: the head cannot be placed now; `eaten`: the run would take what the head needs. */
  kind: 'pinned' | 'unplaceable' | 'eaten';
  /** The head's gpu demand (micros). */
  gpu: bigint;
  /** The devices a pinned head keeps. */
  pinned: number[];
}

/** What one live worker's next claim would do with the run. */
export interface WorkerVerdict {
  worker: string;
  /** Resources it needs that the worker (and the pool) do not have. */
  missing: string[];
  /** Devices it is pinned to that the worker does not have. */
  noDevice: number[];
  /** What it needs beyond the worker's total capacity (have: the capacity). */
  over: Shortfall[];
  /** A gpu demand (micros) the worker's devices can never take. */
  unplaceable?: bigint;
  /** Devices its GPU probe finds unusable now (`busy`: a process fitq did not start; `lost`; `stale`: no fresh reading), with why. */
  gpuUnusable: { device: number; state: string; why: string }[];
  /** The run cannot start on the devices left usable even once the worker's runs end: it waits for gpuUnusable's. */
  gpuWait: boolean;
  /** Its gpumem demand (bytes, micros) and the device with the most memory free for it, as the worker's probe read it. */
  gpumem?: { need: bigint; device: number; free: bigint; total: bigint };
  /** How many MIG devices the worker has, said with `unplaceable`: a whole gpu above 1 cannot go on them. */
  migDevices?: number;
  /** A gpumem demand above every device's total memory (total: the largest device's). */
  gpumemOver?: { need: bigint; total: bigint };
  /** The worker runs its maximum of runs. */
  slots?: { running: number; concurrency: number };
  /** The older run it waits behind (policy fifo). */
  fifoBlockedBy?: string;
  /** Runs of another user (`user`), staged after it, come first by fair share: how much of their share each has used (1: all of it). */
  fair?: { user: string; runUser: string; used: number; usedOf: number };
  /** It would start the run now, on these GPU devices (none: no devices). */
  starts?: number[];
  /** The run would be the worker's blocked head: it holds resources for it. */
  next: boolean;
  /** What it needs beyond what is free now (have: free). */
  short: Shortfall[];
  /** The devices it needs are not free now. */
  devicesBusy: boolean;
  /** The worker's blocked head keeps what it needs: by amount (need: the head's, have: free) and devices. */
  held?: { runId: string; needs: Shortfall[]; devices?: HeldDevices };
  /** Its time limit (ms) is above the worker's --max-time-limit: the worker never claims it. */
  overLimit?: { limit: number; max: number };
  /** It starts only because it ends before the blocked head `runId` can start, in `inMs` at the earliest. */
  backfills?: { runId: string; inMs: number };
  /**
   * Held back by the blocked head `runId`, which can start in `inMs` at the
   * earliest (undefined: not known, a running run has no time limit); the
   * run's time limit there (ms; undefined: none) ends later.
   */
  shadow?: { runId: string; inMs?: number; limit?: number };
  /** An older blocked run (held by `worker`) keeps the pool share it needs (need: the head's, have: free in the pool). */
  poolHeld?: { runId: string; worker: string; needs: Shortfall[] };
  /** Held for this worker's blocked head (held, heldDevices, or poolHeld on this worker): what the head itself lacks. */
  headLacks?: HeadLack[];
}

/**
 * What a blocked head lacks, so that it cannot start: more than its worker
 * has free (`worker`, have: free), than the pool has free (`pool`), the pool
 * share an older run held elsewhere keeps (`poolHeld`, by `holder`), or
 * free GPU devices (`devices`).
 */
export type HeadLack =
  | { kind: 'worker' | 'pool'; shortfall: Shortfall }
  | { kind: 'poolHeld'; holder: string; shortfall: Shortfall }
  | { kind: 'devices' };

/** Why a run waits: the namespace's side, then each live worker's, in the workers' order. */
export interface RunVerdict {
  /** The namespace's queue is paused (the rest says what happens once it is resumed). */
  paused: boolean;
  noWorker: boolean;
  /** Live workers that are drained (fitq drain): no verdict is given for them. */
  drained: string[];
  /** What it demands of a worker (not of the pool), by name. */
  own: string[];
  /** The GPU devices it is pinned to. */
  pins: number[];
  /** What it needs beyond the pool's capacity (have: the capacity). */
  poolOver: Shortfall[];
  /** What it needs beyond what the pool has free now (have: free). */
  poolShort: Shortfall[];
  /** Starting it would take its user past their quota: `running` (runs at once, need 1) or a resource; amounts in micros. */
  quota?: { user: string; name: string; need: bigint; used: bigint; limit: bigint };
  workers: WorkerVerdict[];
}

function shortfall(args: string[], at = 0): Shortfall {
  return { resource: args[at]!, need: parseDecimal(args[at + 1]!), have: parseDecimal(args[at + 2]!) };
}

/** Reads one verdict: a flat list of facts, each a tag, a count n and n strings. */
function parseVerdict(flat: unknown[], paused: boolean): RunVerdict {
  const verdict: RunVerdict = { paused, noWorker: false, drained: [], own: [], pins: [], poolOver: [], poolShort: [], workers: [] };
  let worker: WorkerVerdict | undefined;
  for (let i = 0; i < flat.length; ) {
    const tag = String(flat[i]);
    const count = Number(flat[i + 1]);
    const args = flat.slice(i + 2, i + 2 + count).map(String);
    i += 2 + count;
    if (tag === 'worker') {
      worker = { worker: args[0]!, missing: [], noDevice: [], over: [], next: false, short: [], devicesBusy: false, gpuUnusable: [], gpuWait: false };
      verdict.workers.push(worker);
      continue;
    }
    if (!worker) {
      if (tag === 'noWorker') verdict.noWorker = true;
      else if (tag === 'drained') verdict.drained = args;
      else if (tag === 'own') verdict.own = args;
      else if (tag === 'pins') verdict.pins = args.map(Number);
      else if (tag === 'poolOver') verdict.poolOver.push(shortfall(args));
      else if (tag === 'quota') verdict.quota = { user: args[0]!, name: args[1]!, need: parseDecimal(args[2]!), used: parseDecimal(args[3]!), limit: parseDecimal(args[4]!) };
      else if (tag === 'poolShort') verdict.poolShort.push({ ...shortfall(args), ...(args[3] === undefined ? {} : { capacity: parseDecimal(args[3]) }) });
      continue;
    }
    switch (tag) {
      case 'missing':
        worker.missing = args;
        break;
      case 'noDevice':
        worker.noDevice = args.map(Number);
        break;
      case 'over':
        worker.over.push(shortfall(args));
        break;
      case 'unplaceable':
        worker.unplaceable = parseDecimal(args[0]!);
        break;
      case 'gpuUnusable':
        worker.gpuUnusable.push({ device: Number(args[0]), state: args[1]!, why: args[2]! });
        break;
      case 'mig':
        worker.migDevices = Number(args[0]);
        break;
      case 'gpuWait':
        worker.gpuWait = true;
        break;
      case 'gpumem':
        worker.gpumem = { need: parseDecimal(args[0]!), device: Number(args[1]), free: parseDecimal(args[2]!), total: parseDecimal(args[3]!) };
        break;
      case 'gpumemOver':
        worker.gpumemOver = { need: parseDecimal(args[0]!), total: parseDecimal(args[1]!) };
        break;
      case 'slots':
        worker.slots = { running: Number(args[0]), concurrency: Number(args[1]) };
        break;
      case 'fifo':
        worker.fifoBlockedBy = args[0]!;
        break;
      case 'fair':
        worker.fair = { user: args[0]!, runUser: args[1]!, used: Number(args[2]), usedOf: Number(args[3]) };
        break;
      case 'starts':
        worker.starts = args.map(Number);
        break;
      case 'next':
        worker.next = true;
        break;
      case 'short':
        worker.short.push(shortfall(args));
        break;
      case 'devices':
        worker.devicesBusy = true;
        break;
      case 'held':
        worker.held ??= { runId: args[0]!, needs: [] };
        worker.held.needs.push(shortfall(args, 1));
        break;
      case 'heldDevices':
        worker.held ??= { runId: args[0]!, needs: [] };
        worker.held.devices = {
          kind: args[1] as HeldDevices['kind'],
          gpu: parseDecimal(args[2]!),
          pinned: args.slice(3).map(Number),
        };
        break;
      case 'overLimit':
        worker.overLimit = { limit: Number(args[0]), max: Number(args[1]) };
        break;
      case 'backfills':
        worker.backfills = { runId: args[0]!, inMs: Number(args[1]) };
        break;
      case 'shadow':
        worker.shadow = {
          runId: args[0]!,
          ...(args[1] ? { inMs: Number(args[1]) } : {}),
          ...(args[2] ? { limit: Number(args[2]) } : {}),
        };
        break;
      case 'poolHeld':
        worker.poolHeld ??= { runId: args[0]!, worker: args[1]!, needs: [] };
        worker.poolHeld.needs.push({ ...shortfall(args, 2), ...(args[5] === undefined ? {} : { capacity: parseDecimal(args[5]) }) });
        break;
      case 'headShort':
        (worker.headLacks ??= []).push({ kind: 'worker', shortfall: shortfall(args) });
        break;
      case 'headPoolShort':
        (worker.headLacks ??= []).push({ kind: 'pool', shortfall: shortfall(args) });
        break;
      case 'headPoolHeld':
        (worker.headLacks ??= []).push({ kind: 'poolHeld', holder: args[0]!, shortfall: shortfall(args, 1) });
        break;
      case 'headDevices':
        (worker.headLacks ??= []).push({ kind: 'devices' });
        break;
    }
  }
  return verdict;
}

/**
 * Reads the explainRuns reply: a verdict per run asked about (run ids, then
 * shapes), undefined for a run that is not staged.
 */
export function parseExplainReply(reply: unknown): (RunVerdict | undefined)[] {
  const [paused, flatVerdicts, indexes] = reply as [number, unknown[][], number[]];
  const verdicts = flatVerdicts.map((flat) => parseVerdict(flat, paused === 1));
  return indexes.map((index) => (index > 0 ? verdicts[index - 1] : undefined));
}
