/**
 * The tools of `fitq mcp` that say what a change would do, without writing
 * (as `--dry-run`): which runs a cancel would end (the dependents that could
 * then never start included), and how an update would change each run.
 * They read only, so they need no --allow-actions.
 */
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { FitqClient } from '../client.js';
import { cancelCascade } from '../model/dependencies.js';
import { READ_ONLY, runRefs, toolResult } from './tool-result.js';


export function registerPreviewTools(server: McpServer, client: FitqClient): void {
  server.registerTool(
    'preview_cancel',
    {
      title: 'Preview a cancel',
      description: 'What cancel_runs would cancel, as `fitq cancel --dry-run`: the runs named, and the runs that depend on them and could then never start. Writes nothing.',
      inputSchema: { runs: runRefs },
      outputSchema: { runs: z.array(z.object({ id: z.string(), status: z.string(), cascade: z.boolean().describe('Canceled because it depends on a run named') })) },
      annotations: { title: 'Preview a cancel', ...READ_ONLY },
    },
    ({ runs }) =>
      toolResult(async () => {
        const named = new Set(await client.resolveRunIds(runs));
        const affected = cancelCascade(await client.listRuns(), [...named]);
        return { runs: affected.map((run) => ({ id: run.id, status: run.status, cascade: !named.has(run.id) })) };
      }),
  );

  server.registerTool(
    'preview_update',
    {
      title: 'Preview an update',
      description: 'What `fitq update` would change in staged or held runs (priority, demands, labels, time limit), field by field, old -> new. Writes nothing.',
      inputSchema: {
        runs: runRefs,
        priority: z.number().int().optional(),
        resources: z.string().optional().describe('Demands to change, as -r: "gpu=2" (0 removes one)'),
        labels: z.record(z.string()).optional().describe('Labels to set'),
        timeLimit: z.string().optional().describe('As --time-limit: "2h"'),
      },
      outputSchema: {
        runs: z.array(z.object({ id: z.string(), outcome: z.string(), changes: z.array(z.object({ field: z.string(), from: z.string(), to: z.string() })) })),
      },
      annotations: { title: 'Preview an update', ...READ_ONLY },
    },
    ({ runs, priority, resources, labels, timeLimit }) =>
      toolResult(async () => {
        const changes = {
          ...(priority === undefined ? {} : { priority }),
          ...(resources === undefined ? {} : { resources }),
          ...(labels === undefined ? {} : { labels }),
          ...(timeLimit === undefined ? {} : { timeLimit }),
        };
        const results = await client.updateRuns(await client.resolveRunIds(runs), changes, { dryRun: true });
        return {
          runs: results.map(({ id, outcome, changes: changed }) => ({ id, outcome, changes: changed.map(({ field, from, to }) => ({ field, from: String(from), to: String(to) })) })),
        };
      }),
  );
}
