/**
 * The claim script's side of a worker: how it claims (policy, GPU
 * placement, time limits) and what a claim replies, decoded once (the
 * claimed run: model/claimed-run.ts).
 */
import { decodeClaim, type ClaimedRun } from '../model/claimed-run.js';
import { runFields } from '../model/run-data.js';
import { codeName } from './script-codes.js';

/** backfill: start what fits without starving the blocked head (default); fifo: strict order. */
export type ClaimPolicy = 'backfill' | 'fifo';

/** Where a fractional gpu demand goes: pack onto the fullest device that fits (default), or spread onto the emptiest. */
export type GpuPlacement = 'pack' | 'spread';

export type ClaimResult =
  /** `claim`: the run and what the claim gave it, decoded once (model/claimed-run.ts). */
  | { code: 'claimed'; runId: string; epoch: string; claim: ClaimedRun }
  | {
      code: 'waiting';
      ignored: IgnoredGroup[];
      /** The blocked head this worker holds resources for, if any. */ holding?: string;
      /** Ms until the next run that begins later (--begin, --delay, a retry's backoff) is due, if any. */ nextBeginMs?: number;
      /** The worker's runs being preempted, each with the run it makes room for: it signals and stops them (lua/includes/preemption/). */
      preempting: Preempting[];
    }
  | { code: 'idle'; ignored: IgnoredGroup[]; nextBeginMs?: number }
  | { code: 'full' }
  | { code: 'paused' }
  /** The worker is drained (fitq drain): it claims nothing. */
  | { code: 'drained' }
  /** The fit index of the worker's class caught up with part of what changed (many shapes staged, a new class): claim again at once. */
  | { code: 'indexing' }
  | { code: 'fenced' };

/**
 * What reclaimRun made of a claim a failover lost: claimed back (`reclaimed`),
 * held for it already (`held`), or lost: the run moved on without it (`why`:
 * gone, moved — claimed since or no longer staged, `status` and the worker
 * it runs on —, parked, or noRoom — `other`, the resource no longer free).
 */
export type ReclaimResult =
  | { code: 'reclaimed' }
  | { code: 'held' }
  | { code: 'lost'; why: 'gone' | 'moved' | 'parked' | 'noRoom'; status: string; other: string }
  | { code: 'fenced' };

/** Reads reclaimRun's reply. */
export function parseReclaimReply(reply: unknown[]): ReclaimResult {
  switch (codeName(reply[0])) {
    case 'ok':
      return { code: 'reclaimed' };
    case 'unchanged':
      return { code: 'held' };
    case 'claimLost': {
      const why = String(reply[1]);
      if (why !== 'gone' && why !== 'moved' && why !== 'parked' && why !== 'noRoom') throw new Error(`reclaimRun replied why ${why}`);
      return { code: 'lost', why, status: String(reply[2] ?? ''), other: String(reply[3] ?? '') };
    }
    case 'fenced':
      return { code: 'fenced' };
    default:
      throw new Error(`reclaimRun replied ${String(reply[0])}`);
  }
}

/** A group of demand shapes (their resource names, `cpu,mem`) a worker cannot run, with the resource names it lacks. */
export interface IgnoredGroup {
  group: string;
  missing: string[];
  /** Changes when runs of this group are staged or leave. */
  version: string;
}

/**
 * A worker's time limits: `defaultMs` for runs staged without one; it never
 * claims a run whose limit is above `maxMs`, and gives one staged without
 * the default, else the maximum.
 */
export interface ClaimLimits {
  defaultMs?: number | undefined;
  maxMs?: number | undefined;
}


/** A time limit as a script argument: '' for none. */
export const limitArg = (ms: number | undefined): string => (ms === undefined ? '' : String(ms));

/** HGETALL's flat reply as a record. */
export function flatToRecord(flat: string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) record[flat[i] as string] = flat[i + 1] as string;
  return record;
}

function parseIgnored(list: unknown): IgnoredGroup[] {
  return (list as string[]).map((entry) => {
    const [group = '', missing = '', version = ''] = entry.split('|');
    return { group, missing: missing.split(','), version };
  });
}

/** The claim's `nextBegin` (ms, -1 for none) as an optional field. */
function nextBegin(value: unknown): { nextBeginMs?: number } {
  const ms = Number(value ?? -1);
  return Number.isFinite(ms) && ms >= 0 ? { nextBeginMs: ms } : {};
}


/** A run of the worker a claim preempted, and the run it makes room for. */
export interface Preempting {
  runId: string;
  forRun: string;
}

/** A flat list `runId, forRun, ...` (the claim's and the heartbeat's). */
export function parsePreempting(list: unknown): Preempting[] {
  const flat = Array.isArray(list) ? (list as unknown[]).map(String) : [];
  const pairs: Preempting[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push({ runId: flat[i]!, forRun: flat[i + 1]! });
  return pairs;
}

/** Reads the claim script's reply. */
export function parseClaimReply(reply: unknown[]): ClaimResult {
  switch (codeName(reply[0])) {
    case 'ok': {
      const runId = String(reply[1]);
      const epoch = String(reply[2]);
      return { code: 'claimed', runId, epoch, claim: decodeClaim(runId, epoch, runFields(runId, flatToRecord(reply[3] as string[])), Number(reply[4])) };
    }
    case 'waiting':
      return {
        code: 'waiting',
        ignored: parseIgnored(reply[1]),
        holding: reply[2] ? String(reply[2]) : undefined,
        ...nextBegin(reply[3]),
        preempting: parsePreempting(reply[4]),
      };
    case 'idle':
      return { code: 'idle', ignored: parseIgnored(reply[1]), ...nextBegin(reply[3]) };
    case 'full':
      return { code: 'full' };
    case 'paused':
      return { code: 'paused' };
    case 'drained':
      return { code: 'drained' };
    case 'indexing':
      return { code: 'indexing' };
    case 'fenced':
      return { code: 'fenced' };
    default:
      throw new Error(`claimRun replied ${String(reply[0])}`);
  }
}
