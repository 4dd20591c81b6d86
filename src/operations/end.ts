/**
 * Ending runs and removing them: canceling (`fitq cancel`: a staged run at
 * once, a running one stopped by its worker), removing runs with their
 * logs (`fitq runs rm`), and cleaning ended runs away (`fitq runs clean`,
 * and history retention).
 */
import { UsageError } from '../errors.js';
import { serverTimeMs } from '../model/liveness.js';
import { validateRunId } from '../model/names.js';
import type { RunRecord, RunStatus } from '../model/run-record.js';
import { cleanableStatuses } from '../model/retention.js';
import { execPipeline } from '../redis/pipeline.js';
import { quote } from '../text/quote.js';
import { CLEAN_CHUNK, REMOVE_CHUNK } from './chunks.js';
import type { QueueContext } from './context.js';
import { getRun, getRuns } from './read.js';
import { requestSigner } from './requests.js';
import { notYoursOf, RefusedError } from '../queue/script-codes.js';
import { refusedRequestMessage } from '../security/request-signature.js';
import { RunRemovedError, unknownRun } from './run-errors.js';
import { waitForEnd } from './wait.js';

/** What cancelRuns did to one run, and the run as it is now. */
export interface CancelResult {
  id: string;
  outcome: 'canceled' | 'requested' | 'ended' | 'removed' | 'notYours';
  /** Absent once the run has been removed. */
  run?: RunRecord;
  /** Why a run not canceled was (only its user or an admin may cancel a run its user signed). */
  message?: string;
}

/** Which ended runs `cleanRuns` removes: all given must hold. */
export interface CleanOptions {
  /** Only runs with these statuses (ended ones only); default: every ended run. */
  statuses?: readonly RunStatus[];
  /** Only runs that ended more than this many ms ago (by the Redis server's clock). */
  olderThanMs?: number;
  /** Keep this many, the most recently ended, of the runs with those statuses. */
  keep?: number;
}

/** Run statuses read per round trip when selecting runs to clean. */
const STATUS_READ_CHUNK = 5000;

/**
 * Cancels a run: a staged one at once; a running one is stopped by its
 * worker (SIGTERM to its process group, SIGKILL after a grace period).
 * With `wait`, resolves once the run has ended. A run that has already
 * ended is a UsageError.
 */
export async function cancelRun(ctx: QueueContext, runId: string, options: { wait?: boolean; timeoutMs?: number } = {}): Promise<RunRecord> {
  const [result] = await cancelRuns(ctx, [runId], options);
  // Gone after its cancellation: removed meanwhile (rm, clean, or retention as other runs ended).
  if (!result?.run) throw result && result.outcome !== 'removed' ? new RunRemovedError(runId) : unknownRun(runId);
  if (result.outcome === 'ended') throw new UsageError(`run '${runId}' already ended (${result.run.status})`);
  if (result.outcome === 'notYours') throw new UsageError(result.message!);
  return result.run;
}

/**
 * Cancels runs, each as cancelRun does; the ids are all checked first, so
 * an unknown one (UsageError) cancels nothing. Reports per run what
 * happened and the run as it is now: `canceled` (it was staged),
 * `requested` (it was running: with `wait`, it has ended since), `ended`
 * (it had already ended) or `removed` (removed meanwhile: no run).
 */
export async function cancelRuns(ctx: QueueContext, runIds: readonly string[], options: { wait?: boolean; timeoutMs?: number } = {}): Promise<CancelResult[]> {
  const ids = [...new Set(runIds)];
  ids.forEach(validateRunId);
  const exists = ctx.redis.pipeline();
  for (const id of ids) exists.exists(ctx.keys.run(id));
  const missing = (await execPipeline(exists)).findIndex((count) => count !== 1);
  if (missing >= 0) throw unknownRun(ids[missing]!);
  // Every cancellation is requested before waiting for any, so running runs stop together.
  const outcomes: { id: string; outcome: CancelResult['outcome']; message: string }[] = [];
  const requests = await requestSigner(ctx, 'cancel');
  for (const id of ids) {
    const { outcome, status } = await ctx.scripts.cancelRun(id, requests.of(id));
    const message = outcome === 'notYours' ? refusedRequestMessage('cancel', id, status, requests.requester) : '';
    outcomes.push({ id, outcome: outcome === 'unknown' ? 'removed' : outcome, message });
  }
  const results: CancelResult[] = [];
  for (const { id, outcome, message } of outcomes) {
    if (outcome === 'removed') results.push({ id, outcome });
    else if (outcome === 'notYours') results.push({ id, outcome, message, run: await getRun(ctx, id).catch(() => undefined) });
    else if (outcome === 'requested' && options.wait) results.push(await waitForEnd(ctx, id, options.timeoutMs).then(
      (run) => ({ id, outcome, run }),
      (error: unknown) => {
        if (error instanceof RunRemovedError) return { id, outcome: 'removed' as const };
        throw error;
      },
    ));
    else results.push({ id, outcome, run: await getRun(ctx, id).catch(() => undefined) });
  }
  return results;
}

/**
 * Removes runs and their logs, all or nothing up to REMOVE_CHUNK runs (one
 * script call each, so Redis is never held long; more go in parts, in the
 * order given). A running run is refused unless `force`, which cancels it
 * and waits for it to end first. A part refused after others went (a run
 * started or was removed meanwhile) says how many were removed before.
 */
export async function removeRuns(ctx: QueueContext, runIds: readonly string[], options: { force?: boolean } = {}): Promise<number> {
  runIds.forEach(validateRunId);
  if (options.force) {
    const running = (await getRuns(ctx, runIds)).filter(({ run }) => run.status === 'running').map(({ run }) => run.id);
    // Stopped together; one that ends meanwhile is fine.
    const refused = running.length > 0 ? (await cancelRuns(ctx, running, { wait: true })).find(({ outcome }) => outcome === 'notYours') : undefined;
    if (refused !== undefined) throw new UsageError(refused.message!);
  }
  const ids = [...new Set(runIds)];
  const requests = await requestSigner(ctx, 'rm');
  let removed = 0;
  for (let i = 0; i < ids.length; i += REMOVE_CHUNK) {
    try {
      removed += await ctx.scripts.removeRuns(ids.slice(i, i + REMOVE_CHUNK).map((id) => [id, requests.of(id)] as const));
    } catch (caught) {
      const error = caught instanceof RefusedError && caught.code === 'notYours' ? refusedRemoval(caught, requests.requester) : caught;
      if (removed === 0 || !(error instanceof UsageError)) throw error;
      throw new UsageError(`removed ${removed} of ${ids.length} runs, then stopped: ${error.message}`);
    }
  }
  return removed;
}

/** A removal refused as another user's signed run: said with who asked. */
function refusedRemoval(refused: RefusedError, requester: string): UsageError {
  const { runId, owner } = notYoursOf(refused.value);
  return new UsageError(refusedRequestMessage('rm', runId, owner, requester));
}

/**
 * Removes ended runs now, with their logs and keys: the runs
 * selectCleanRuns selects, or of `selected` (its earlier answer) those
 * that still have those statuses and ended by then. Returns how many runs
 * it removed.
 */
export async function cleanRuns(ctx: QueueContext, options: CleanOptions = {}, selected?: readonly string[]): Promise<number> {
  const { statuses, latest, ids } = await cleanSelection(ctx, options, selected);
  let removed = 0;
  for (let i = 0; i < ids.length; i += CLEAN_CHUNK) {
    removed += await ctx.scripts.cleanRuns(statuses, latest, ids.slice(i, i + CLEAN_CHUNK));
  }
  return removed;
}

/**
 * The runs cleanRuns would remove now, in the order they ended: every
 * ended run, or those with `statuses` that ended more than `olderThanMs`
 * ago, less the `keep` most recently ended of them (all given must hold).
 * Staged and running runs are never selected; asking for them is a
 * UsageError.
 */
export async function selectCleanRuns(ctx: QueueContext, options: CleanOptions = {}): Promise<string[]> {
  return [...(await cleanSelection(ctx, options)).ids];
}

/** What cleanRuns removes: the statuses and latest end it may remove (checked again by its script), and the run ids. */
async function cleanSelection(
  ctx: QueueContext,
  options: CleanOptions,
  given?: readonly string[],
): Promise<{ statuses: RunStatus[]; latest: number | undefined; ids: readonly string[] }> {
  const statuses = cleanableStatuses(options.statuses);
  for (const [name, value] of [['older than', options.olderThanMs], ['keep', options.keep]] as const) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
      throw new UsageError(`expected ${name} to be a whole number from 0, got ${quote(String(value))}`);
    }
  }
  const now = serverTimeMs(await ctx.redis.time());
  // Ended more than olderThanMs ago: at most this.
  const latest = options.olderThanMs === undefined ? undefined : now - options.olderThanMs - 1;
  // (The script removes only runs that still have those statuses and ended by then.)
  if (given !== undefined) return { statuses, latest, ids: given };
  const states = [
    ...(statuses.includes('completed') ? ['completed'] : []),
    ...(statuses.some((status) => status !== 'completed') ? ['failed'] : []),
  ];
  const ended: { id: string; finishedOn: number }[] = [];
  for (const state of states) {
    const flat = await ctx.redis.zrange(ctx.keys.queue.key(state), 0, -1, 'WITHSCORES');
    for (let i = 0; i + 1 < flat.length; i += 2) ended.push({ id: flat[i]!, finishedOn: Number(flat[i + 1]) });
  }
  const status = new Map<string, string | null>();
  for (let i = 0; i < ended.length; i += STATUS_READ_CHUNK) {
    const pipeline = ctx.redis.pipeline();
    const chunk = ended.slice(i, i + STATUS_READ_CHUNK);
    for (const { id } of chunk) pipeline.hget(ctx.keys.run(id), 'status');
    (await execPipeline(pipeline)).forEach((reply, j) => status.set(chunk[j]!.id, reply as string | null));
  }
  // Newest first: the first `keep` stay.
  const selected = ended
    .filter(({ id }) => (statuses as readonly string[]).includes(status.get(id) ?? ''))
    .sort((a, b) => b.finishedOn - a.finishedOn || (a.id < b.id ? 1 : -1))
    .slice(options.keep ?? 0)
    .filter(({ finishedOn }) => latest === undefined || finishedOn <= latest)
    .map(({ id }) => id)
    .reverse();
  return { statuses, latest, ids: selected };
}
