/**
 * The hold operation (operations/hold.ts), called directly with a context
 * as FitqClient calls it: holding and releasing the runs named, each judged
 * on its own, and nothing else.
 */
import { describe, expect, it } from 'vitest';
import { cancelRuns } from '../../src/operations/end.js';
import { setHeld } from '../../src/operations/hold.js';
import { readRuns } from '../../src/operations/read.js';
import { stageRuns } from '../../src/operations/stage.js';
import type { QueueContext } from '../../src/operations/context.js';
import { connectContext, newQueue } from '../support/fitq.js';

/** Each run's status, by id. */
async function statuses(ctx: QueueContext, ids: readonly string[]): Promise<Record<string, string>> {
  return Object.fromEntries((await readRuns(ctx, ids)).map((run) => [run.id, run.status]));
}

/** Stages runs named a, b, c... (no worker: they stay staged). */
async function stageNamed(ctx: QueueContext, ids: readonly string[]): Promise<void> {
  await stageRuns(ctx, ids.map((runId) => ({ command: ['true'], resources: 'cpu=1', runId })));
}

describe('setHeld', () => {
  it('holds the runs named, leaves others unaffected', async () => {
    const ctx = await connectContext(newQueue());
    await stageNamed(ctx, ['a', 'b', 'c']);
    const results = await setHeld(ctx, 'hold', ['a', 'b']);
    expect(results.map(({ id, outcome }) => [id, outcome])).toEqual([['a', 'held'], ['b', 'held']]);
    expect(await statuses(ctx, ['a', 'b', 'c'])).toEqual({ a: 'held', b: 'held', c: 'staged' });
  });

  it('releases the runs named, each back at its place in the order, leaves the others held', async () => {
    const ctx = await connectContext(newQueue());
    await stageNamed(ctx, ['a', 'b', 'c']);
    const before = await readRuns(ctx, ['a', 'b', 'c']);
    await setHeld(ctx, 'hold', ['a', 'b', 'c']);
    const results = await setHeld(ctx, 'release', ['b']);
    expect(results).toEqual([{ id: 'b', outcome: 'released', message: 'Run b released: it may start now' }]);
    expect(await statuses(ctx, ['a', 'b', 'c'])).toEqual({ a: 'held', b: 'staged', c: 'held' });
    expect((await readRuns(ctx, ['a', 'b', 'c'])).map((run) => run.seq)).toEqual(before.map((run) => run.seq));
  });

  it('judges each run on its own: one not staged is refused, the others are held', async () => {
    const ctx = await connectContext(newQueue());
    await stageNamed(ctx, ['a', 'b', 'c']);
    await cancelRuns(ctx, ['b']);
    const results = await setHeld(ctx, 'hold', ['a', 'b']);
    expect(results.map(({ id, outcome, status }) => ({ id, outcome, status }))).toEqual([
      { id: 'a', outcome: 'held', status: undefined },
      { id: 'b', outcome: 'refused', status: 'canceled' },
    ]);
    expect(await statuses(ctx, ['a', 'b', 'c'])).toEqual({ a: 'held', b: 'canceled', c: 'staged' });
  });

  it('leaves a run already held as it is, and names runs by a unique prefix of their id', async () => {
    const ctx = await connectContext(newQueue());
    await stageNamed(ctx, ['alpha', 'beta']);
    await setHeld(ctx, 'hold', ['alpha']);
    const results = await setHeld(ctx, 'hold', ['alp', 'be']);
    expect(results.map(({ id, outcome }) => [id, outcome])).toEqual([['alpha', 'unchanged'], ['beta', 'held']]);
  });
});
