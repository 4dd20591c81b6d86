/**
 * The tools of `fitq mcp` that change the queue: stage, update, hold,
 * release, cancel and restart runs. Each is marked as changing state (readOnlyHint false), so a
 * client asks its user first, and is refused, saying how to allow it,
 * unless the server was started with --allow-actions. Runs are signed as
 * `fitq stage` signs them (the shared secret, the user's key).
 */
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FitqClient } from '../client.js';
import { stageInput, stageRequestOf } from './stage-input.js';
import { runRefs, toolError, toolResult } from './tool-result.js';
import { runChangesOf, updateInput, updateResults, updateResultsOf } from './update-input.js';

export const ACTIONS_REFUSED = 'this fitq mcp server only reads: start it with --allow-actions to let its client stage, update, hold, release, cancel or restart runs';


export function registerChangeTools(server: McpServer, client: FitqClient, allowActions: boolean): void {
  /** The tool's work, or the refusal when actions are not allowed. */
  const act = (work: () => Promise<Record<string, unknown>>): Promise<CallToolResult> =>
    allowActions ? toolResult(work) : Promise.resolve(toolError(ACTIONS_REFUSED));

  server.registerTool(
    'stage_run',
    {
      title: 'Stage a run',
      description:
        'Stages a command, as `fitq stage`, with any of its options: demands, GPUs, an array (indices or rows of parameters, a limit), ' +
        'dependencies, a hold or begin time, a time limit, retries, labels, preemption. It starts on a worker once its demands fit that worker\'s free capacity. ' +
        'Changes the queue: the run will execute on a worker. preview_stage says first what it would do.',
      inputSchema: stageInput,
      outputSchema: { runs: z.array(z.string()).describe('The ids staged'), array: z.string().optional().describe('The array staged, if one'), warnings: z.array(z.string()) },
      annotations: { title: 'Stage a run', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (input) =>
      act(async () => {
        const result = await client.stage(stageRequestOf(input));
        const array = result.runs[0]?.array;
        return { runs: result.runs.map((run) => run.id), ...(array === undefined ? {} : { array }), warnings: result.warnings };
      }),
  );

  server.registerTool(
    'update_runs',
    {
      title: 'Update runs',
      description: 'Changes staged or held runs, as `fitq update`: priority, demands, labels, GPUs, time limit; each run on its own, only while it has not started. preview_update shows the changes first.',
      inputSchema: updateInput,
      outputSchema: { runs: updateResults, warnings: z.array(z.string()) },
      annotations: { title: 'Update runs', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (input) =>
      act(async () => {
        const ids = await client.resolveRunIds(input.runs);
        const results = await client.updateRuns(ids, runChangesOf(input));
        const updated = results.filter((result) => result.outcome === 'updated').map((result) => result.id);
        return { runs: updateResultsOf(results), warnings: await client.unrunnableWarnings(updated, 'updated') };
      }),
  );

  server.registerTool(
    'restart_runs',
    {
      title: 'Restart runs',
      description:
        'Stages ended runs again, as `fitq restart`: each a fresh attempt with the same id, at its place in the order; with cascade, ' +
        'the dependents canceled because of them too. preview_restart lists them first.',
      inputSchema: { runs: runRefs, cascade: z.boolean().default(false) },
      outputSchema: {
        results: z.array(z.object({ id: z.string(), outcome: z.string(), cascade: z.boolean(), where: z.string().optional(), message: z.string() })),
      },
      annotations: { title: 'Restart runs', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ runs, cascade }) =>
      act(async () => {
        const results = await client.restartRuns(await client.resolveRunIds(runs), { cascade });
        return {
          results: results.map(({ id, outcome, cascade: reached, where, message }) => ({ id, outcome, cascade: reached === true, ...(where === undefined ? {} : { where }), message })),
        };
      }),
  );

  for (const mode of ['hold', 'release'] as const) {
    server.registerTool(
      `${mode}_runs`,
      {
        title: mode === 'hold' ? 'Hold runs' : 'Release runs',
        description: mode === 'hold' ? 'Holds staged runs, as `fitq hold`: they stay staged but never start until released.' : 'Releases held runs, as `fitq release`: they may start again, at their place.',
        inputSchema: { runs: runRefs },
        outputSchema: { results: z.array(z.object({ id: z.string(), outcome: z.string(), message: z.string() })) },
        annotations: { title: mode === 'hold' ? 'Hold runs' : 'Release runs', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      },
      ({ runs }) =>
        act(async () => {
          const results = mode === 'hold' ? await client.holdRuns(runs) : await client.releaseRuns(runs);
          return { results: results.map(({ id, outcome, message }) => ({ id, outcome, message })) };
        }),
    );
  }

  server.registerTool(
    'cancel_runs',
    {
      title: 'Cancel runs',
      description: 'Cancels runs, as `fitq cancel --no-wait`: a staged one at once, a running one by stopping its process group. Cannot be undone (fitq restart stages it again).',
      inputSchema: { runs: runRefs },
      outputSchema: { results: z.array(z.object({ id: z.string(), outcome: z.string(), status: z.string().optional(), message: z.string().optional() })) },
      annotations: { title: 'Cancel runs', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ runs }) =>
      act(async () => {
        const results = await client.cancelRuns(await client.resolveRunIds(runs), { wait: false });
        return {
          results: results.map(({ id, outcome, run, message }) => ({ id, outcome, ...(run ? { status: run.status } : {}), ...(message ? { message } : {}) })),
        };
      }),
  );
}
