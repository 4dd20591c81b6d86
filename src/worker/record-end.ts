/**
 * The end of a run, recorded: what run-ending.ts makes of its stop and its
 * process's outcome is written to Redis (finishRun), tried again while Redis
 * refuses it, and the worker's log says what was recorded, or why nothing was.
 */
import type { Logger } from 'pino';
import type { FinishInput, FinishResult } from '../queue/worker-calls.js';
import type { ActiveRun } from './active-run.js';
import type { ExecutorContext } from './executor-context.js';
import { retryRefused } from './retry.js';
import { encodeRunUsage } from '../model/run-usage.js';
import { endingMessage, endingToRecord, type EndingRun, type RunEnding } from './run-ending.js';

/**
 * Records the end of a run whose phase is `ending`, releasing its
 * reservation, and logs what was recorded (or why nothing was). Resolves
 * with what was written, and the status the run has now, when Redis recorded it.
 */
export async function recordRunEnd(
  ctx: ExecutorContext,
  run: ActiveRun,
  outcome: RunEnding,
  log: Logger,
): Promise<{ input: FinishInput; status: string } | undefined> {
  // As the run stands now: a stop asked while its end is being recorded changes nothing.
  const ending: EndingRun = {
    stop: run.stop,
    started: run.process !== undefined,
    terminated: run.process?.terminated ?? false,
  };
  const toRecord = endingToRecord(ending, outcome);
  let result: FinishResult | Error;
  let tries = 1;
  const input: FinishInput = {
    runId: run.runId,
    worker: ctx.workerName,
    token: ctx.token,
    epoch: run.epoch,
    ...toRecord,
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    ...(run.usage ? { usage: encodeRunUsage(run.usage) } : {}),
  };
  try {
    // Kept and tried again while Redis refuses it (out of memory, busy,
    // failing over): the run keeps its slot meanwhile, as its reservation
    // is still held. The claim's epoch and the registration's token fence
    // a late write: it can never land over a newer claim.
    result = await retryRefused(
      () => ctx.scripts.finishRun(input),
      {
        givenUp: ctx.givenUp,
        onRetry: (error, attempt) => {
          tries = attempt + 1;
          if (attempt === 1) {
            log.warn(`Could not record the end of run ${run.runId} yet; retrying until Redis takes it: ${(error as Error).message}`);
          }
        },
      },
    );
  } catch (error) {
    result = error instanceof Error ? error : new Error(String(error));
  }
  const { level, message } = endingMessage(run.runId, ending, outcome, toRecord, result);
  const fields = {
    // What was recorded: the status the run has now (a stopped run: staged or lost).
    status: result instanceof Error || result.outcome !== 'recorded' ? 'unrecorded' : result.status,
    ...(outcome.exitCode !== undefined ? { exitCode: outcome.exitCode } : {}),
    ...(outcome.signal ? { signal: outcome.signal } : {}),
    ...(run.startedAtMs !== undefined ? { durationMs: Math.round(performance.now() - run.startedAtMs) } : {}),
    ...(result instanceof Error ? { err: result } : {}),
    ...(tries > 1 ? { tries } : {}),
  };
  log[level](fields, message);
  if (result instanceof Error || result.outcome !== 'recorded') return undefined;
  await ctx.replicas?.confirmEnd(run.runId, log);
  if (result.status !== 'staged') ctx.onRunRecorded?.(run.runId, run.fields, result.status);
  return { input, status: result.status };
}
