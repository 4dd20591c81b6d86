/**
 * The tools of `fitq mcp` about the queue as a whole: its summary (runs by
 * status, staged shapes, what ended in the last hour, paused or not), as
 * the dashboard's overview shows it, and the pool.
 */
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { FitqClient } from '../client.js';
import { readRecentRuns, readRunCounts, readStagedShapes } from '../operations/overview.js';
import { formatMicros } from '../resources/amount.js';
import { READ_ONLY, toolResult } from './tool-result.js';

const HOUR_MS = 3_600_000;

export function registerQueueTools(server: McpServer, client: FitqClient): void {
  const ctx = { redis: client.redis, keys: client.keys };

  server.registerTool(
    'queue_summary',
    {
      title: 'Queue summary',
      description:
        'The queue at a glance, as the dashboard\'s overview: runs by status, the staged shapes with most runs (demands and how many wait), ' +
        'how many runs ended in the last hour by status (throughput), and whether the queue is paused.',
      inputSchema: {},
      outputSchema: {
        paused: z.boolean(),
        counts: z.record(z.number()).describe('Runs by status'),
        lumped: z.array(z.object({ label: z.string(), count: z.number() })).describe('Statuses counted together, too many to tell apart'),
        stagedShapes: z.array(z.object({ shape: z.string(), demands: z.string(), staged: z.number(), first: z.string().optional().describe('The run a claim looks at first') })),
        lastHour: z.object({ ended: z.record(z.number()), complete: z.boolean().describe('false: more ended than were read') }),
      },
      annotations: { title: 'Queue summary', ...READ_ONLY },
    },
    () =>
      toolResult(async () => {
        const [paused, counts, shapes, recent] = await Promise.all([
          client.isPaused(), readRunCounts(ctx), readStagedShapes(ctx), readRecentRuns(ctx, Date.now() - HOUR_MS),
        ]);
        const ended: Record<string, number> = {};
        for (const run of recent.runs) if (run.endedAt !== undefined) ended[run.status] = (ended[run.status] ?? 0) + 1;
        return {
          paused,
          counts: counts.counts as Record<string, number>,
          lumped: counts.lumped.map(({ label, count }) => ({ label, count })),
          stagedShapes: shapes.map(({ shape, demands, count, head }) => ({ shape, demands, staged: count, ...(head === undefined ? {} : { first: head }) })),
          lastHour: { ended, complete: recent.complete },
        };
      }),
  );

  server.registerTool(
    'list_pools',
    {
      title: 'List the pool',
      description: 'Pool resources shared by every worker (licenses, an array\'s limit), as `fitq pool ls`: capacity and what running runs hold.',
      inputSchema: {},
      outputSchema: { pool: z.array(z.object({ name: z.string(), capacity: z.number(), used: z.number() })) },
      annotations: { title: 'List the pool', ...READ_ONLY },
    },
    () =>
      toolResult(async () => ({
        pool: (await client.listPool()).map(({ name, capacity, used }) => ({ name, capacity: Number(formatMicros(capacity)), used: Number(formatMicros(used)) })),
      })),
  );
}
