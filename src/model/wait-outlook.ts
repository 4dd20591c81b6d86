/**
 * A verdict (explain.ts) as data, for agents (fitq mcp's why_waiting and
 * preview_stage): fitq's one-line answer, and what would let the run
 * start: which workers would start it now, and for each live worker what
 * it lacks (resource, how much is needed, how much is free or there at
 * all), its slots, the blocked head it holds for, the devices its probe
 * finds unusable. Amounts in human units, as fitq shows them.
 */
import { formatHumanAmount } from '../resources/amount.js';
import type { RunVerdict, Shortfall, WorkerVerdict } from './explain.js';
import { whyWaiting } from './why-waiting.js';

export interface AmountGap {
  resource: string;
  need: string;
  /** What is free now (lacking now), or the whole capacity (beyond capacity). */
  have: string;
}

export interface WorkerOutlook {
  worker: string;
  /** Its next claim would start the run now (on `devices`, if any). */
  startsNow: boolean;
  devices?: number[];
  /** Resources the run demands that this worker (and the pool) do not have at all. */
  missing: string[];
  /** What the run needs beyond this worker's whole capacity: it never fits here. */
  beyondCapacity: AmountGap[];
  /** What the run needs beyond what is free here now: it fits once runs end. */
  lacksNow: AmountGap[];
  /** Every slot is taken (--concurrency). */
  slotsFull?: { running: number; concurrency: number };
  /** What it holds free for its blocked head, the run that goes first here. */
  heldFor?: string;
  /** Devices its GPU probe finds unusable (a process fitq did not start, lost), with why. */
  unusableDevices: { device: number; state: string; why: string }[];
  /** Its time limit is above this worker's --max-time-limit (ms). */
  overTimeLimit?: { limitMs: number; maxMs: number };
}

export interface WaitOutlook {
  /** True when some live worker could run it once it has room. */
  runnable: boolean;
  /** fitq's answer in one line, as `fitq runs` gives it. */
  reason: string;
  paused: boolean;
  /** Live workers that are drained: they start nothing. */
  drained: string[];
  /** The pool has not this much free now (have: free), or at all (capacity). */
  pool: { lacksNow: AmountGap[]; beyondCapacity: AmountGap[] };
  /** Its user's (or project's) quota is reached. */
  quota?: { owner: string; name: string; need: string; used: string; limit: string };
  workers: WorkerOutlook[];
}

const gaps = (list: readonly Shortfall[]): AmountGap[] =>
  list.map(({ resource, need, have }) => ({ resource, need: formatHumanAmount(need), have: formatHumanAmount(have < 0n ? 0n : have) }));

function workerOutlook(worker: WorkerVerdict): WorkerOutlook {
  return {
    worker: worker.worker,
    startsNow: worker.starts !== undefined,
    ...(worker.starts !== undefined && worker.starts.length > 0 ? { devices: worker.starts } : {}),
    missing: worker.missing,
    beyondCapacity: gaps(worker.over),
    lacksNow: gaps(worker.short),
    ...(worker.slots ? { slotsFull: worker.slots } : {}),
    ...(worker.held ? { heldFor: worker.held.runId } : {}),
    unusableDevices: worker.gpuUnusable,
    ...(worker.overLimit ? { overTimeLimit: { limitMs: worker.overLimit.limit, maxMs: worker.overLimit.max } } : {}),
  };
}

export function waitOutlook(verdict: RunVerdict): WaitOutlook {
  const { runnable, reason } = whyWaiting(verdict);
  const quota = verdict.quota;
  return {
    runnable,
    reason,
    paused: verdict.paused,
    drained: verdict.drained,
    pool: { lacksNow: gaps(verdict.poolShort), beyondCapacity: gaps(verdict.poolOver) },
    ...(quota
      ? { quota: { owner: quota.user, name: quota.name, need: formatHumanAmount(quota.need), used: formatHumanAmount(quota.used), limit: formatHumanAmount(quota.limit) } }
      : {}),
    workers: verdict.workers.map(workerOutlook),
  };
}
