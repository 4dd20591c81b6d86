/**
 * A run's output: read from the start (readLog, `fitq logs`), or followed
 * until the run ends (followLog, `fitq logs -f`), over a connection of its
 * own that survives Redis restarts. The reads themselves are log-reads.ts's.
 */
import { TimeoutError, UsageError } from '../errors.js';
import type { LogEntry } from '../model/logs.js';
import { isEnded, type RunRecord } from '../model/run-record.js';
import { asUpkeepLeavesIt } from '../model/upkeep-view.js';
import { closeRedis } from '../redis/open-connections.js';
import { nodeServing } from '../redis/nodes.js';
import type { QueueContext } from './context.js';
import { lastEventId, readLogEntries, waitLogEntries } from './log-reads.js';
import { getRun, readRun, type StoredRun } from './read.js';
import { RunRemovedError } from './run-errors.js';
import { reap } from './upkeep.js';
import { readWorkers } from './workers.js';

/** While a followed run is staged, how often to look whether it started. */
const STAGED_CHECK_MS = 2000;

/** Longest wait between two looks at a followed run (a safety net). */
const MAX_CHECK_MS = 60_000;

/** Past the lease deadline the server gave, so the reap finds it lapsed. */
const LAPSE_MARGIN_MS = 5;

/** Reads a run's output from the start. */
export async function readLog(ctx: QueueContext, runId: string): Promise<LogEntry[]> {
  await getRun(ctx, runId);
  const entries: LogEntry[] = [];
  for (let after = '0'; ; ) {
    const page = await readLogEntries(ctx, runId, after);
    entries.push(...page);
    if (page.length < 1000) return entries;
    after = page[page.length - 1]!.id;
  }
}

/**
 * Calls `onEntry` for each log entry of a run, from the start, until the run
 * ends (or `signal` aborts); a run whose worker died ends as soon as the
 * lease runs out, as a read shows it (lost, unless it has retries left:
 * model/upkeep-view.ts). Reads only. Reconnects by itself if Redis restarts.
 */
export async function followLog(ctx: QueueContext, runId: string, onEntry: (entry: LogEntry) => void, signal?: AbortSignal): Promise<RunRecord> {
  await readRun(ctx, runId); // an unknown id is refused; no wait reason is needed here
  return watchRun(ctx, runId, '0', onEntry, { signal, reap: false });
}

/**
 * Passes a run's log entries after `after` to `onEntry` until the run ends.
 * Waits on the log stream and the queue's event stream (no polling): the
 * run's events (its start, its end, even when its log was packed and its
 * stream deleted, its removal) make it look at the run at once. With
 * `reap` (cancel and rm --force wait so: they change state) it reaps at the
 * moment the next lease runs out, as the server tells: nothing else would
 * end a run whose worker died when no worker is live. Without, it only
 * reads: at the moment the run's worker's lease runs out it reads the run
 * as the reaper will leave it (model/upkeep-view.ts). While the run is
 * staged it looks every few seconds whether it started. Everything goes
 * over a resilient connection of its own, so a Redis restart is survived.
 */
export async function watchRun(
  ctx: QueueContext,
  runId: string,
  after: string,
  onEntry: (entry: LogEntry) => void,
  options: { signal?: AbortSignal | undefined; timeoutMs?: number; reap: boolean },
): Promise<RunRecord> {
  const { signal, timeoutMs } = options;
  const deadline = timeoutMs === undefined ? Infinity : performance.now() + timeoutMs;
  const follower = await ctx.connect();
  // Aborting interrupts a blocked read at once.
  // On a cluster both go to the node that serves the namespace, where the read blocks.
  const followerId = await nodeServing(follower.redis, ctx.keys.base).client('ID');
  const onAbort = () => void nodeServing(ctx.redis, ctx.keys.base).client('UNBLOCK', followerId).catch(() => {});
  signal?.addEventListener('abort', onAbort, { once: true });
  // The run existed when the watch began: gone now, it was removed.
  const readStored = async (): Promise<StoredRun> => {
    try {
      return await readRun(ctx, runId, follower.redis);
    } catch (error) {
      if (error instanceof UsageError && (await follower.redis.exists(ctx.keys.run(runId))) === 0) throw new RunRemovedError(runId);
      throw error;
    }
  };
  const readWatched = async (): Promise<RunRecord> => (await readStored()).run;
  // The run now, and ms until the lease that may end it runs out (undefined: none to wait for).
  const look = async (): Promise<{ run: RunRecord; msUntilLapse: number | undefined }> => {
    if (options.reap) {
      const msUntilLapse = await reap(follower);
      return { run: await readWatched(), msUntilLapse };
    }
    const { run, fields } = await readStored();
    const workers = run.status === 'running' ? await readWorkers(follower) : [];
    const leaseLeftMs = workers.find((worker) => worker.name === run.worker)?.liveness.leaseLeftMs;
    return { run: asUpkeepLeavesIt(run, fields, workers), msUntilLapse: leaseLeftMs !== undefined && leaseLeftMs >= 0 ? leaseLeftMs : undefined };
  };
  try {
    // Taken before the run is first looked at: any later event of the run is after it.
    let eventsAfter = await lastEventId(follower);
    let checkAt = 0; // when to reap and look at the run again
    for (;;) {
      if (signal?.aborted) return readWatched();
      if (performance.now() >= Math.min(checkAt, deadline)) {
        const { run, msUntilLapse } = await look();
        if (isEnded(run)) {
          // Whatever came before its end marker.
          for (let page = await readLogEntries(follower, runId, after); page.length > 0; ) {
            page.forEach(onEntry);
            after = page[page.length - 1]!.id;
            page = await readLogEntries(follower, runId, after);
          }
          return run;
        }
        if (performance.now() >= deadline) {
          throw new TimeoutError(`run '${runId}' did not end within ${Math.round((timeoutMs ?? 0) / 1000)} s`);
        }
        const wait = run.status === 'running' && msUntilLapse !== undefined ? msUntilLapse + LAPSE_MARGIN_MS : STAGED_CHECK_MS;
        checkAt = performance.now() + Math.min(Math.max(wait, 0), MAX_CHECK_MS);
      }
      // BLOCK 0 would wait forever: at least 1 ms.
      const blockMs = Math.max(1, Math.ceil(Math.min(checkAt, deadline) - performance.now()));
      const waited = await waitLogEntries(follower, runId, after, eventsAfter, blockMs);
      eventsAfter = waited.eventsAfter;
      if (waited.runEvent) checkAt = 0;
      for (const entry of waited.entries) {
        onEntry(entry);
        after = entry.id;
        if (entry.kind === 'end') {
          const run = await readWatched();
          // Else the end of an attempt before the run was retried (from BullMQ): it goes on.
          if (isEnded(run)) return run;
        }
        // Staged again: look at once when it starts anew.
        if (entry.kind === 'restaged') checkAt = 0;
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await closeRedis(follower.redis);
  }
}
