/**
 * What update_runs and preview_update take, as `fitq update` does: the
 * changes to staged or held runs, and the RunChanges they make; and what
 * they answer, run by run.
 */
import { z } from 'zod';
import type { RunChanges } from '../model/run-edits.js';
import type { UpdateResult } from '../operations/update.js';
import { runRefs } from './tool-result.js';

export const updateInput = {
  runs: runRefs,
  priority: z.number().int().optional(),
  resources: z.string().optional().describe('Demands to change, as -r: "gpu=2" (0 removes one); the others stay'),
  labels: z.record(z.string()).optional().describe('Labels to set'),
  unlabel: z.array(z.string()).optional().describe('Keys of labels to remove'),
  gpus: z.string().nullable().optional().describe('Pin to these GPU devices, "0,1"; null unpins'),
  timeLimit: z.string().nullable().optional().describe('As --time-limit: "2h"; null removes it'),
};

type UpdateInput = z.objectOutputType<typeof updateInput, z.ZodTypeAny>;

export function runChangesOf({ priority, resources, labels, unlabel, gpus, timeLimit }: UpdateInput): RunChanges {
  return {
    ...(priority === undefined ? {} : { priority }),
    ...(resources === undefined ? {} : { resources }),
    ...(labels === undefined ? {} : { labels }),
    ...(unlabel === undefined ? {} : { unlabel }),
    ...(gpus === undefined ? {} : { gpus }),
    ...(timeLimit === undefined ? {} : { timeLimit }),
  };
}

/** What update_runs and preview_update answer, run by run. */
export const updateResults = z.array(
  z.object({
    id: z.string(),
    outcome: z.string().describe('updated (previewed: would be), unchanged, refused'),
    changes: z.array(z.object({ field: z.string(), from: z.string(), to: z.string() })),
    reason: z.string().optional(),
  }),
);

export function updateResultsOf(results: readonly UpdateResult[]): z.infer<typeof updateResults> {
  return results.map(({ id, outcome, changes, reason }) => ({ id, outcome, changes, ...(reason === undefined ? {} : { reason }) }));
}
