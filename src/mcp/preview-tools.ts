/**
 * The tools of `fitq mcp` that say what a change would do, without writing
 * (as `--dry-run`): which runs a cancel would end (the dependents that could
 * then never start included), how an update would change each run, what a
 * stage would stage and whether it would start, which runs a restart would
 * stage again.
 * They read only, so they need no --allow-actions.
 */
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { FitqClient } from '../client.js';
import { cancelCascade, restartCascade } from '../model/dependencies.js';
import { isEnded } from '../model/run-record.js';
import type { StageRequest } from '../model/stage.js';
import { waitOutlook } from '../model/wait-outlook.js';
import { PREVIEWED_RUNS } from '../operations/stage-preview.js';
import { describeDemands, formatCommand } from '../present/run-table.js';
import { formatDuration } from '../units/time.js';
import { waitOutlookSchema } from './outlook-schema.js';
import { stageInput, stageRequestOf } from './stage-input.js';
import { READ_ONLY, runRefs, toolResult } from './tool-result.js';
import { runChangesOf, updateInput, updateResults, updateResultsOf } from './update-input.js';


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
      description: 'What update_runs (`fitq update`) would change in staged or held runs (priority, demands, labels, GPUs, time limit), field by field, old -> new. Writes nothing.',
      inputSchema: updateInput,
      outputSchema: { runs: updateResults },
      annotations: { title: 'Preview an update', ...READ_ONLY },
    },
    (input) =>
      toolResult(async () => ({
        runs: updateResultsOf(await client.updateRuns(await client.resolveRunIds(input.runs), runChangesOf(input), { dryRun: true })),
      })),
  );

  server.registerTool(
    'preview_stage',
    {
      title: 'Preview a stage',
      description:
        'What stage_run would do with the same input, writing nothing: fitq checks every value (a mistake comes back as its one-line error), ' +
        'the runs it would stage (the first ones as they would run, an array\'s placeholders filled in), and per demand shape whether a live worker ' +
        'would start one now, or why it would wait and what would let it start. A staged quota and an id already in use are judged only when staging.',
      inputSchema: stageInput,
      outputSchema: {
        count: z.number().describe('Runs it would stage'),
        runs: z.array(z.object({ id: z.string(), command: z.string(), requires: z.string(), index: z.number().optional(), params: z.record(z.string()).optional() }))
          .describe(`The first ${PREVIEWED_RUNS}, as they would run (ids are drawn anew when staging, unless runId is given)`),
        shapes: z.array(z.object({ requires: z.string(), runs: z.number(), outlook: waitOutlookSchema })),
        waitsFirst: z.array(z.string()).describe('What its runs wait for before any worker looks at them: a hold, a begin time, dependencies'),
      },
      annotations: { title: 'Preview a stage', ...READ_ONLY },
    },
    (input) =>
      toolResult(async () => {
        const request = stageRequestOf(input);
        const preview = await client.previewStage([request]);
        return {
          count: preview.count,
          runs: preview.runs.map((run) => ({
            id: run.id, command: formatCommand(run), requires: describeDemands(run),
            ...(run.arrayIndex === undefined ? {} : { index: run.arrayIndex }), ...(run.params === undefined ? {} : { params: run.params }),
          })),
          shapes: preview.shapes.map(({ runs, first, verdict }) => ({ requires: describeDemands(first), runs, outlook: waitOutlook(verdict) })),
          waitsFirst: waitsFirst(request),
        };
      }),
  );

  server.registerTool(
    'preview_restart',
    {
      title: 'Preview a restart',
      description:
        'What restart_runs would stage again, as `fitq restart --dry-run`: the ended runs named (a run not ended is refused), ' +
        'and with cascade the dependents canceled because of them, and theirs in turn. Writes nothing.',
      inputSchema: { runs: runRefs, cascade: z.boolean().default(false) },
      outputSchema: { runs: z.array(z.object({ id: z.string(), status: z.string(), restarts: z.boolean(), cascade: z.boolean().describe('Reached by the cascade') })) },
      annotations: { title: 'Preview a restart', ...READ_ONLY },
    },
    ({ runs, cascade }) =>
      toolResult(async () => {
        const named = await client.readRuns(await client.resolveRunIds(runs));
        const reached = cascade ? restartCascade(await client.listRuns(), named.map((run) => run.id)) : [];
        return {
          runs: [
            ...named.map((run) => ({ id: run.id, status: run.status, restarts: isEnded(run), cascade: false })),
            ...reached.map((run) => ({ id: run.id, status: run.status, restarts: true, cascade: true })),
          ],
        };
      }),
  );
}

/** What a staged run waits for before workers look at it, from its request. */
function waitsFirst(request: StageRequest): string[] {
  return [
    ...(request.hold ? ['held: it starts only once released'] : []),
    ...(request.beginAt !== undefined ? [`not before ${new Date(request.beginAt).toISOString()}`] : []),
    ...(request.delayMs !== undefined ? [`not before ${formatDuration(request.delayMs)} after staging`] : []),
    ...(request.after !== undefined ? ['its dependencies'] : []),
  ];
}
