/**
 * A run a worker claimed, decoded once, where the claim's reply is read
 * (Scripts.claimRun): the run as fitq shows it, its demands, and what the
 * claim gave it (its epoch, what it reserved of the worker and of the pool,
 * the GPU devices it placed it on, its deadline). The worker's checks, the
 * run's start and its time limit read these, never the raw fields again.
 */
import { parseDecimal } from '../resources/amount.js';
import { parseStoredResources, type Resources } from '../resources/spec.js';
import { decodeRun } from './run-decode.js';
import type { RunRecord } from './run-record.js';

export interface ClaimedRun {
  runId: string;
  /** How many times the run was claimed: fences every write of this claim. */
  epoch: string;
  /** Its flat fields (runFields) as the claim read them: what its signature is checked on. */
  fields: Readonly<Record<string, string>>;
  /** The run as fitq shows it. */
  run: RunRecord;
  /** Its exact demands (signed), an array's limit included. */
  demands: Resources;
  /** The GPU devices it is pinned to (signed; empty: none). */
  pinnedGpus: readonly number[];
  /** Its own time limit, ms, as staged (signed), if any: not the one the claim chose (RunRecord.timeLimit). */
  stagedTimeLimit?: number | undefined;
  /** What the claim reserved of the worker (`reserved`) and of the pool (`pooled`). */
  reserved: Resources;
  pooled: Resources;
  /** The GPU devices the claim placed it on (empty: none), and the share it took of each. */
  devices: readonly number[];
  deviceShare?: bigint | undefined;
  /** When its time limit runs out (epoch ms, the Redis server's clock at the claim plus the limit), if it has one. */
  deadline?: number | undefined;
  /** Which attempt of the run this claim starts (1 for its first; its history's length plus one), when the claim said. */
  attempt?: number | undefined;
}

/** Decodes a claimed run from the claim's reply: its id, epoch and flat fields (runFields of the hash it read). */
export function decodeClaim(runId: string, epoch: string, fields: Readonly<Record<string, string>>, attempt?: number): ClaimedRun {
  const { run, demands } = decodeRun(fields);
  const ownLimit = fields.timeLimit ? Number(fields.timeLimit) : undefined;
  return {
    runId,
    epoch,
    fields,
    run,
    demands,
    pinnedGpus: run.pinnedGpus ?? [],
    stagedTimeLimit: ownLimit !== undefined && Number.isFinite(ownLimit) && ownLimit > 0 ? ownLimit : undefined,
    reserved: parseStoredResources(fields.reserved),
    pooled: parseStoredResources(fields.pooled),
    devices: run.devices ?? [],
    deviceShare: fields.deviceShare ? parseDecimal(fields.deviceShare) : undefined,
    deadline: fields.deadline ? Number(fields.deadline) : undefined,
    attempt: attempt !== undefined && Number.isSafeInteger(attempt) && attempt > 0 ? attempt : undefined,
  };
}

/** A claim known only by its run id and epoch (its reply never arrived): enough to give it back. */
export function unreadClaim(runId: string, epoch: string): ClaimedRun {
  return decodeClaim(runId, epoch, {});
}
