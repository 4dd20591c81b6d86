/**
 * `fitq stage --wait` (stage, then wait until the runs end and exit with
 * their code, as `sbatch --wait`) and `--follow` (print the run's output
 * meanwhile, as `fitq logs -f` does: LogPrinter).
 */
import { Flags } from '@oclif/core';
import { UsageError } from '../errors.js';
import type { FitqClient } from '../client.js';
import { oneLine } from '../text/quote.js';
import { isEnded, type RunRecord } from '../model/run-record.js';
import { WaitIncompleteError } from '../operations/wait.js';
import { LogPrinter } from './log-printer.js';
import { describeEnd } from '../present/run-end.js';
import { EXIT } from '../exit-codes.js';
import { firstFailure, runExitCode, waitExitCode } from '../model/run-exit-code.js';

export const stageWaitFlags = {
  wait: Flags.boolean({
    summary: 'Wait until the staged runs end, and exit with their exit code (as fitq wait).',
  }),
  follow: Flags.boolean({
    summary: "Wait (--wait) and print the run's output meanwhile, stdout and stderr each to its own; the run id goes to stderr.",
  }),
};

export interface StageWait {
  follow: boolean;
  json: boolean;
}

/** What `--wait`/`--follow` ask for, or undefined; `--follow` takes one run (refused before anything is staged). */
export function parseStageWait(flags: { wait?: boolean; follow?: boolean; json?: boolean }, runCount: number): StageWait | undefined {
  if (!flags.wait && !flags.follow) return undefined;
  if (flags.follow && runCount !== 1) {
    throw new UsageError(`--follow prints one run's output, but ${runCount} runs would be staged: use --wait, then fitq logs`);
  }
  return { follow: flags.follow === true, json: flags.json === true };
}

/**
 * Waits for the staged runs (following the one run's output with
 * `follow`); says how each ended on stderr; returns the exit code (130 when
 * interrupted by SIGINT or SIGTERM: the runs go on).
 */
export async function waitForStaged(client: FitqClient, ids: readonly string[], options: StageWait): Promise<{ code: number; runs: RunRecord[] }> {
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (options.follow) {
      const printer = new LogPrinter(client.logMaxLines);
      const run = await client.followLog(ids[0]!, printer.print, abort.signal);
      await printer.flushed();
      if (!isEnded(run)) {
        process.stderr.write(`Interrupted: run ${run.id} is ${run.status} (fitq wait ${run.id})\n`);
        return { code: EXIT.interrupted, runs: [run] };
      }
      process.stderr.write(`${oneLine(describeEnd(run))}\n`);
      return { code: runExitCode(run), runs: [run] };
    }
    const runs = await client.waitForRuns(ids, { signal: abort.signal, onEnd: (run) => process.stderr.write(`${oneLine(describeEnd(run))}\n`) });
    const failure = firstFailure(runs);
    if (failure && runs.length > 1) process.stderr.write(`${runs.filter((run) => run.status !== 'completed').length} of ${runs.length} runs did not complete\n`);
    return { code: waitExitCode(runs), runs };
  } catch (error) {
    if (!(error instanceof WaitIncompleteError)) throw error;
    process.stderr.write(`${oneLine(error.message)} (fitq wait)\n`);
    return { code: EXIT.interrupted, runs: error.runs };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
