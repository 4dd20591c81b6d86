/** What the scripts that stage and change runs take and give (stage, update, hold, restart, reconcile). */
import type { NamespaceKeys } from './keys.js';
import { acceptReply } from './script-codes.js';

/** One run of a staging batch, as the stage script takes it. */
export interface StageScriptRun {
  id: string;
  shape: string;
  priority: number;
  /** Its job data, JSON text. */
  data: string;
  /** The array it is part of, and the array's limit (most of its runs running at once), if any. */
  array?: string;
  limit?: number;
}

/** One edited run, as the update script takes it (see updateRuns-*.lua). */
export interface UpdateScriptRun {
  id: string;
  /** The job data the edit was made from: the run is changed only if it still holds it. */
  expectedData: string;
  data: string;
  shape: string;
  priority: number;
  /** What changed, e.g. "priority,resources" (for the `updated` event). */
  changes: string;
  /** The request for it (operations/requests.ts; "": none). */
  request?: string;
}

/**
 * What the update script did with one run: changed it; left it because it
 * is no longer staged or held (`status`: what it is now), or because its
 * data changed since it was read; or found no such run.
 */
export type UpdateScriptOutcome =
  | { outcome: 'updated' }
  | { outcome: 'status'; status: string }
  | { outcome: 'changed' }
  | { outcome: 'gone' }
  | { outcome: 'notYours'; owner: string };

/** What reconciling fitq's index with BullMQ's actions did to one job (see reconcileRuns-*.lua). */
export interface ReconcileAction {
  /**
   * `retried`: an ended run BullMQ retried is staged again (`detail`: the
   * status it had); `rejected`: a job added without fitq's run data ended
   * rejected; `priority`: an unsigned staged run took the priority BullMQ
   * gave it (`detail`: fitq's priority now); `priorityKept`: a signed run
   * kept its signed priority (`detail`); `forgotten`: a run whose job BullMQ
   * deleted is gone from fitq's index; `promoted`: a delayed run BullMQ
   * promoted (job.promote) begins now; `dataKept`: a run's job data BullMQ
   * rewrote (job.updateData) is put back as fitq wrote it, which is all
   * fitq ever read (`detail`: its status).
   */
  kind: 'retried' | 'rejected' | 'priority' | 'priorityKept' | 'forgotten' | 'promoted' | 'dataKept';
  runId: string;
  detail: string;
}

/** A chunk of a batch staged in several script calls (see stageRuns-*.lua). */
export interface BatchChunk {
  id: string;
  /** How long the batch stays open from this call on, in ms (the Redis server's clock). */
  ttlMs: number;
  first: boolean;
  /** Runs of the whole batch (a `staged` quota is checked against them with the first chunk); the chunk's own when not given. */
  total?: number;
}

/** Where a staged batch went: its first run's staging sequence number, and when it was staged (the Redis server's clock, epoch ms). */
export interface StagedBatch {
  firstSeq: number;
  timestamp: number;
}

/**
 * Reads the stage script's reply (see StagedBatch); a taken run id or an
 * older layout throws its RefusedError.
 */
export function parseStageReply(reply: unknown, keys: NamespaceKeys): StagedBatch {
  const [code, value, timestamp] = reply as [number, string | number, number?];
  acceptReply(code, value, keys);
  return { firstSeq: Number(value), timestamp: Number(timestamp) };
}

/** What holding or releasing one run did (see setHeld-*.lua). */
export interface HeldOutcome {
  outcome: 'held' | 'released' | 'unchanged' | 'notStaged' | 'notYours' | 'unknown';
  /** released: where it went (staged, delayed, deps); notStaged: its status; notYours: its user. */
  detail: string;
}

/** What restarting one run did (see restartRuns-*.lua). */
export interface RestartOutcome {
  runId: string;
  outcome: 'restarted' | 'notEnded' | 'notYours' | 'unknown' | 'cascadeLeft';
  /** restarted: where it went (staged, delayed, held, deps, canceled); notEnded: its status; notYours: its user. */
  detail: string;
}

/** A script's reply entry `a|b|rest…`: its first `count` parts, then the rest (which may hold `|`). */
function entryParts(entry: string, count: number): string[] {
  const parts = entry.split('|');
  return [...Array.from({ length: count }, (_, i) => parts[i] ?? ''), parts.slice(count).join('|')];
}

export function parseReconcileAction(entry: string): ReconcileAction {
  const [kind, runId, detail] = entryParts(entry, 2) as [string, string, string];
  return { kind: kind as ReconcileAction['kind'], runId, detail };
}

export function parseUpdateOutcome(entry: string): UpdateScriptOutcome {
  const [outcome, status] = entry.split('|');
  if (outcome === 'status') return { outcome, status: status ?? '' };
  if (outcome === 'notYours') return { outcome, owner: status ?? '' };
  if (outcome === 'updated' || outcome === 'changed' || outcome === 'gone') return { outcome };
  throw new Error(`updateRuns replied ${entry}`);
}

export function parseHeldOutcome(entry: string): HeldOutcome {
  const [outcome, detail] = entryParts(entry, 1) as [string, string];
  return { outcome: outcome as HeldOutcome['outcome'], detail };
}

export function parseRestartOutcome(entry: string): RestartOutcome {
  const [runId, outcome, detail] = entryParts(entry, 2) as [string, string, string];
  return { runId, outcome: outcome as RestartOutcome['outcome'], detail };
}
