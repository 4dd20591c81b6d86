/**
 * What the dashboard's actions do, by FitqClient's own methods (those the
 * CLI commands call), and the lines they report: the lines `fitq cancel`,
 * `hold`, `release`, `restart`, `update --priority`, `drain` and `undrain`
 * print. Routes, forms and their guards are actions.ts's.
 */
import { drainLine } from '../present/result-lines.js';
import { describeCancel, describeUpdate } from '../present/result-lines.js';
import { UsageError } from '../errors.js';
import type { FitqClient } from '../client.js';
import { MAX_PRIORITY, parseIntegerOption } from '../model/run-checks.js';

export const RUN_ACTIONS = ['cancel', 'hold', 'release', 'restart', 'priority'] as const;
export type RunAction = (typeof RUN_ACTIONS)[number];
export const WORKER_ACTIONS = ['drain', 'undrain'] as const;
export type WorkerAction = (typeof WORKER_ACTIONS)[number];

export interface ActionOutcome {
  /** False when fitq refused it (the lines say why). */
  ok: boolean;
  lines: string[];
}

/** A refusal a user can act on becomes its outcome; anything else stands. */
async function outcomeOf(act: () => Promise<ActionOutcome>): Promise<ActionOutcome> {
  try {
    return await act();
  } catch (error) {
    if (error instanceof UsageError) return { ok: false, lines: [error.message] };
    throw error;
  }
}

/** Whether an action was done to a run (or was already so), not refused. */
const wasDone = ({ outcome }: { outcome: string }): boolean => outcome !== 'refused' && outcome !== 'notYours';

/** Acts on one run (its full id); `value` is the new priority, as typed, for `priority`. */
export function runAction(client: FitqClient, action: RunAction, runId: string, value?: string): Promise<ActionOutcome> {
  return outcomeOf(async () => {
    switch (action) {
      case 'cancel': {
        // Not waited for: a running run's end shows on the page as it comes.
        const results = await client.cancelRuns([runId], { wait: false });
        return { ok: results.every(wasDone), lines: results.map(describeCancel) };
      }
      case 'hold':
      case 'release': {
        const results = action === 'hold' ? await client.holdRuns([runId]) : await client.releaseRuns([runId]);
        return { ok: results.every(wasDone), lines: results.map((result) => result.message) };
      }
      case 'restart': {
        const results = await client.restartRuns([runId]);
        return { ok: results.every(wasDone), lines: results.map((result) => result.message) };
      }
      case 'priority': {
        const priority = parseIntegerOption('priority', value ?? '', -MAX_PRIORITY, MAX_PRIORITY);
        const results = await client.updateRuns([runId], { priority });
        return {
          ok: results.every(wasDone),
          lines: results.map((result) => (result.outcome === 'refused' ? (result.reason ?? `Run ${result.id} not updated`) : describeUpdate(result, false))),
        };
      }
    }
  });
}

/** Drains a live worker (it finishes its runs and claims nothing more) or undrains it. */
export function workerAction(client: FitqClient, action: WorkerAction, name: string): Promise<ActionOutcome> {
  return outcomeOf(async () => {
    const drained = action === 'drain';
    const results = await client.setDrained([name], drained);
    return { ok: true, lines: results.map((result) => drainLine(result, drained)) };
  });
}
