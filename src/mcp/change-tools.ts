/**
 * The tools of `fitq mcp` that change the queue: stage, hold, release and
 * cancel runs. Each is marked as changing state (readOnlyHint false), so a
 * client asks its user first, and is refused, saying how to allow it,
 * unless the server was started with --allow-actions. Runs are signed as
 * `fitq stage` signs them (the shared secret, the user's key).
 */
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FitqClient } from '../client.js';
import { runRefs, toolError, toolResult } from './tool-result.js';

export const ACTIONS_REFUSED = 'this fitq mcp server only reads: start it with --allow-actions to let its client stage, hold, release or cancel runs';


export function registerChangeTools(server: McpServer, client: FitqClient, allowActions: boolean): void {
  /** The tool's work, or the refusal when actions are not allowed. */
  const act = (work: () => Promise<Record<string, unknown>>): Promise<CallToolResult> =>
    allowActions ? toolResult(work) : Promise.resolve(toolError(ACTIONS_REFUSED));

  server.registerTool(
    'stage_run',
    {
      title: 'Stage a run',
      description:
        'Stages a command, as `fitq stage`: it starts on a worker once its demands fit that worker\'s free capacity. ' +
        'Changes the queue: the run will execute on a worker.',
      inputSchema: {
        command: z.array(z.string()).min(1).describe('The argv to run (no shell unless `shell`)'),
        resources: z.string().optional().describe('Demands, as -r takes them: "gpu=1 mem=8G"'),
        labels: z.record(z.string()).optional(),
        priority: z.number().int().optional().describe('Higher runs first; default 0'),
        timeLimit: z.string().optional().describe('As --time-limit: "30m", "2h"'),
        repeat: z.number().int().min(1).max(10_000).optional().describe('Stage this many identical runs'),
        hold: z.boolean().optional().describe('Stage it held: it starts only once released'),
        after: z.array(z.string()).optional().describe('Run ids it waits for, to complete first (--after)'),
        cwd: z.string().optional().describe("Working directory on the worker; default the server's"),
        shell: z.boolean().optional().describe('Run the words joined with sh -c'),
      },
      outputSchema: { runs: z.array(z.string()).describe('The ids staged'), warnings: z.array(z.string()) },
      annotations: { title: 'Stage a run', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ command, resources, labels, priority, timeLimit, repeat, hold, after, cwd, shell }) =>
      act(async () => {
        const result = await client.stage({
          command,
          ...(resources === undefined ? {} : { resources }),
          ...(labels === undefined ? {} : { labels }),
          ...(priority === undefined ? {} : { priority }),
          ...(timeLimit === undefined ? {} : { timeLimit }),
          ...(repeat === undefined ? {} : { repeat }),
          ...(hold === undefined ? {} : { hold }),
          ...(after === undefined ? {} : { after: [{ kind: 'ok' as const, ids: await client.resolveRunIds(after) }] }),
          ...(cwd === undefined ? {} : { cwd }),
          ...(shell === undefined ? {} : { shell }),
        });
        return { runs: result.runs.map((run) => run.id), warnings: result.warnings };
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
