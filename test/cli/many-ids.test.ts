/**
 * Commands that take many names (cancel, runs rm, hold, release, restart, wait, stop, pool rm): oclif's
 * parser takes time quadratic in the words it is given (40,000 ids took
 * 16-19 s on an idle 2-core box), so more than 1,000 are refused before it
 * sees them, in one line saying how to select or batch them instead.
 */
import { describe, expect, it } from 'vitest';
import { connectClient, fitq, newQueue } from '../support/fitq.js';

const ids = (count: number) => Array.from({ length: count }, (_, i) => `zz${String(i).padStart(6, '0')}`);

describe('commands taking many names', () => {
  it.each([
    [['cancel'], 'select the runs with --status, --label or --array, or name them in batches (xargs -n 500 fitq cancel)'],
    [['runs', 'rm'], 'select the runs with --status, --label or --array, or name them in batches (xargs -n 500 fitq runs rm)'],
    [['hold'], 'select the runs with --status, --label or --array, or name them in batches (xargs -n 500 fitq hold)'],
    [['release'], 'select the runs with --status, --label or --array, or name them in batches (xargs -n 500 fitq release)'],
    [['restart'], 'select the runs with --status, --label or --array, or name them in batches (xargs -n 500 fitq restart)'],
    [['wait'], 'select the runs with --status, --label or --array, or name them in batches (xargs -n 500 fitq wait)'],
    [['stop'], 'stop every worker with --all, or name them in batches (xargs -n 500 fitq stop)'],
    [['pool', 'rm'], 'name them in batches (xargs -n 500 fitq pool rm)'],
  ])('%j refuses 40,000 names at once, in one line, and touches nothing', { timeout: 60_000 }, async (command, hint) => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { runs } = await client.stage({ command: ['true'] });
    const pool = await client.setPool('license=1');
    const result = await fitq([...command, runs[0]!.id, 'license', ...ids(39_998)], { queue, timeoutMs: 30_000 });
    expect(result.exitCode, result.stderr).toBe(2);
    // Refused by fitq's bound before oclif's parser sees them (parsing them took 16 s and more).
    expect(result.stderr).toBe(`Error: too many arguments: 40000 given, at most 1000: ${hint}`);
    expect(result.stdout).toBe('');
    expect((await client.getRun(runs[0]!.id)).status).toBe('staged');
    expect(await client.listPool()).toEqual(pool);
  });

  it('takes 1,000 ids: cancels and removes them all', { timeout: 60_000 }, async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const staged = (await client.stage({ command: ['true'], repeat: 1000 })).runs.map((run) => run.id);
    const canceled = await fitq(['cancel', ...staged], { queue });
    expect(canceled.exitCode, canceled.stderr).toBe(0);
    expect(canceled.stdout.trim().split('\n')).toHaveLength(1000);
    const removed = await fitq(['runs', 'rm', ...staged], { queue });
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect(removed.stdout.trim()).toBe('Removed 1000 runs.');
    expect(await client.listRuns()).toEqual([]);
  });
});
