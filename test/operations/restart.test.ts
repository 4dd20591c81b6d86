/**
 * The restart operation (operations/restart.ts), called directly with a
 * context: ended runs named are staged again, each a fresh attempt with the
 * same id; runs not named, and runs that have not ended, stay as they are.
 */
import { describe, expect, it } from 'vitest';
import { cancelRuns } from '../../src/operations/end.js';
import { readRuns } from '../../src/operations/read.js';
import { restartRuns } from '../../src/operations/restart.js';
import { stageRuns } from '../../src/operations/stage.js';
import { reconcile } from '../../src/operations/upkeep.js';
import { connectContext, newQueue } from '../support/fitq.js';

describe('restartRuns', () => {
  it('stages again the ended runs named, leaves others unaffected', async () => {
    const ctx = await connectContext(newQueue());
    await stageRuns(ctx, ['a', 'b', 'c'].map((runId) => ({ command: ['true'], resources: 'cpu=1', runId })));
    await cancelRuns(ctx, ['a', 'b']);
    const results = await restartRuns(ctx, ['a'], false);
    expect(results.map(({ id, outcome, where }) => ({ id, outcome, where }))).toEqual([{ id: 'a', outcome: 'restarted', where: 'staged' }]);
    const runs = await readRuns(ctx, ['a', 'b', 'c']);
    expect(runs.map((run) => [run.id, run.status, run.restarted])).toEqual([
      ['a', 'staged', 1],
      ['b', 'canceled', undefined],
      ['c', 'staged', undefined],
    ]);
  });

  it('refuses a run that has not ended, and restarts the others named', async () => {
    const ctx = await connectContext(newQueue());
    await stageRuns(ctx, ['a', 'b'].map((runId) => ({ command: ['true'], resources: 'cpu=1', runId })));
    await cancelRuns(ctx, ['a']);
    const results = await restartRuns(ctx, ['a', 'b'], false);
    expect(results.map(({ id, outcome, status }) => ({ id, outcome, status }))).toEqual([
      { id: 'a', outcome: 'restarted', status: undefined },
      { id: 'b', outcome: 'refused', status: 'staged' },
    ]);
  });

  it('with cascade, restarts every dependent canceled with the run, however many (the calls beyond the first go on where the cascade stopped)', async () => {
    const ctx = await connectContext(newQueue());
    await stageRuns(ctx, [{ command: ['true'], resources: 'cpu=1', runId: 'root' }]);
    const dependents = Array.from({ length: 1100 }, (_, i) => `dep${i}`);
    await stageRuns(ctx, dependents.map((runId) => ({ command: ['true'], resources: 'cpu=1', runId, after: [{ kind: 'ok' as const, ids: ['root'] }] })));
    await cancelRuns(ctx, ['root']);
    // The dependents beyond the first batch are judged by reconcile calls.
    await reconcile(ctx);
    expect(new Set((await readRuns(ctx, dependents)).map((run) => run.status))).toEqual(new Set(['canceled']));

    const results = await restartRuns(ctx, ['root'], true);
    expect(results.filter((result) => result.outcome !== 'restarted')).toEqual([]);
    expect(results.map((result) => result.id).sort()).toEqual(['root', ...dependents].sort());
    expect(results.filter((result) => result.cascade)).toHaveLength(1100);
    expect(new Set((await readRuns(ctx, dependents)).map((run) => run.status))).toEqual(new Set(['staged']));
  });
});
