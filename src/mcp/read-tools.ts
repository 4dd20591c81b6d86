/**
 * The tools of `fitq mcp` that only read: runs (a page, one run, its log
 * tail, why it waits), workers, and waiting for runs to end with a bound.
 * Each answers what the matching command answers (`fitq runs`, `runs show`,
 * `logs`, `workers`, `wait`), as JSON.
 */
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { FitqClient } from '../client.js';
import { RUN_STATUSES, type RunRecord } from '../model/run-record.js';
import { workerToJson } from '../model/worker-record.js';
import { WaitIncompleteError } from '../operations/wait.js';
import { READ_ONLY, toolResult } from './tool-result.js';
import { waitOutlookSchema } from './outlook-schema.js';
import { waitOutlook } from '../model/wait-outlook.js';


/** Most runs one list_runs page holds; most log lines one run_log returns; longest wait_runs waits. */
export const MAX_PAGE = 500;
export const MAX_LOG_LINES = 2000;
export const MAX_WAIT_SECONDS = 600;

const runSchema = z.record(z.unknown()).describe('A run as `fitq runs show ID --json` prints it');
const runRef = z.string().min(1).describe('A run id, or a unique prefix of one');

export function registerReadTools(server: McpServer, client: FitqClient): void {
  server.registerTool(
    'list_runs',
    {
      title: 'List runs',
      description:
        'Runs in staging order, as `fitq runs` lists them, each staged one with why it waits (`reason`). ' +
        'Filters must all hold. Page with `from` (the `next` of the previous page).',
      inputSchema: {
        status: z.array(z.enum(RUN_STATUSES)).optional().describe('Only runs with one of these statuses'),
        user: z.string().optional().describe('Only runs this user staged'),
        labels: z.record(z.string()).optional().describe('Only runs with every one of these labels'),
        array: z.string().optional().describe('Only the runs of this array (its id, or a unique prefix of it)'),
        limit: z.number().int().min(1).max(MAX_PAGE).default(50).describe(`Most runs on the page (at most ${MAX_PAGE})`),
        from: z.number().int().min(0).optional().describe('Runs staged after this staging number: the `next` of the previous page'),
      },
      outputSchema: { runs: z.array(runSchema), next: z.number().optional().describe('Where the next page starts; absent: no more runs') },
      annotations: { title: 'List runs', ...READ_ONLY },
    },
    ({ status, user, labels, array, limit, from }) =>
      toolResult(async () => {
        const page = await client.readRunPage({
          filter: { ...(status ? { statuses: status } : {}), ...(user ? { user } : {}), ...(labels ? { labels } : {}), ...(array ? { array } : {}) },
          limit,
          ...(from === undefined ? {} : { from }),
        });
        return { runs: page.runs as unknown as Record<string, unknown>[], ...(page.next === undefined ? {} : { next: page.next }) };
      }),
  );

  server.registerTool(
    'show_run',
    {
      title: 'Show a run',
      description: 'One run, as `fitq runs show ID --json`: its command, demands, status, worker, times, exit code, and why it waits or how it ended (`reason`).',
      inputSchema: { run: runRef },
      outputSchema: { run: runSchema },
      annotations: { title: 'Show a run', ...READ_ONLY },
    },
    ({ run }) => toolResult(async () => ({ run: (await client.getRun(await client.resolveRunId(run))) as unknown as Record<string, unknown> })),
  );

  server.registerTool(
    'why_waiting',
    {
      title: 'Why a run waits',
      description:
        "fitq's own answer to why a staged run has not started (`why`), and what would let it start (`outlook`): which workers would start it now, " +
        'and for each live worker what it lacks (resource, need, free or capacity), its slots, the blocked run it holds for; the pool and a quota. ' +
        'A held run, one waiting for dependencies or a begin time says so in `why` alone; a run that is not staged gives its status and why it ended so.',
      inputSchema: { run: runRef },
      outputSchema: { id: z.string(), status: z.string(), why: z.string().optional(), outlook: waitOutlookSchema.optional() },
      annotations: { title: 'Why a run waits', ...READ_ONLY },
    },
    ({ run }) =>
      toolResult(async () => {
        const id = await client.resolveRunId(run);
        const [record, verdicts] = await Promise.all([client.getRun(id), client.explainWaits([id])]);
        const verdict = record.status === 'staged' ? verdicts.get(id) : undefined;
        return {
          id: record.id,
          status: record.status,
          ...(record.reason === undefined ? {} : { why: record.reason }),
          ...(verdict === undefined ? {} : { outlook: waitOutlook(verdict) }),
        };
      }),
  );

  server.registerTool(
    'run_log',
    {
      title: "A run's log",
      description: "The last lines of a run's output (stdout and stderr, in order), as `fitq logs`, and how it ended if it has.",
      inputSchema: { run: runRef, lines: z.number().int().min(1).max(MAX_LOG_LINES).default(100).describe(`Last lines to return (at most ${MAX_LOG_LINES})`) },
      outputSchema: {
        lines: z.array(z.object({ stream: z.enum(['stdout', 'stderr']), line: z.string() })),
        ended: z.string().optional().describe('How the run ended, once it has'),
      },
      annotations: { title: "A run's log", ...READ_ONLY },
    },
    ({ run, lines }) =>
      toolResult(async () => {
        const entries = await client.readLog(await client.resolveRunId(run));
        const output = entries.flatMap((entry) => (entry.kind === 'line' ? [{ stream: entry.stream, line: entry.line }] : []));
        const last = entries[entries.length - 1];
        return { lines: output.slice(-lines), ...(last?.kind === 'end' ? { ended: last.status } : {}) };
      }),
  );

  server.registerTool(
    'list_workers',
    {
      title: 'List workers',
      description: 'Live workers, as `fitq workers --json`: capacity, what is in use, GPU devices, their runs, state (active, draining, drained) and lease.',
      inputSchema: {},
      outputSchema: { workers: z.array(z.record(z.unknown())) },
      annotations: { title: 'List workers', ...READ_ONLY },
    },
    () => toolResult(async () => ({ workers: (await client.listWorkers()).map(workerToJson) })),
  );

  server.registerTool(
    'wait_runs',
    {
      title: 'Wait for runs',
      description: `Waits until every run named has ended, at most timeoutSeconds (at most ${MAX_WAIT_SECONDS}); says which ended and how, and which had not.`,
      inputSchema: {
        runs: z.array(runRef).min(1).max(MAX_PAGE),
        timeoutSeconds: z.number().min(0).max(MAX_WAIT_SECONDS).default(60),
      },
      outputSchema: { done: z.boolean().describe('Every run has ended'), runs: z.array(runSchema), pending: z.array(z.string()) },
      annotations: { title: 'Wait for runs', ...READ_ONLY },
    },
    ({ runs, timeoutSeconds }) =>
      toolResult(async () => {
        const asJson = (records: RunRecord[]) => records as unknown as Record<string, unknown>[];
        try {
          return { done: true, runs: asJson(await client.waitForRuns(runs, { timeoutMs: timeoutSeconds * 1000 })), pending: [] };
        } catch (error) {
          if (!(error instanceof WaitIncompleteError)) throw error;
          return { done: false, runs: asJson(error.runs), pending: error.pending };
        }
      }),
  );
}
