/**
 * The overview's reads are bounded by what it shows: runs by status from
 * the queue's states' sizes (statuses sharing a state told apart while it
 * holds at most SPLIT_MOST runs, counted together beyond), and at most
 * SHAPES_MOST staged shapes, the oldest, with how many there are in all.
 */
import { describe, expect, it } from 'vitest';
import { readRunCounts, readStagedShapes, SHAPES_MOST, SPLIT_MOST } from '../../src/operations/overview.js';
import { connectClient, newQueue } from '../support/fitq.js';

describe('the overview reads', () => {
  it('count runs by status, ends other than completed told apart up to SPLIT_MOST runs, counted together beyond', async () => {
    const client = await connectClient(newQueue());
    const ids = (await client.stage({ command: ['true'], resources: 'nowhere=1', repeat: SPLIT_MOST + 3 })).runs.map((run) => run.id);
    await client.stage({ command: ['true'], resources: 'nowhere=1', hold: true });
    await client.cancelRuns(ids.slice(0, 2));
    expect(await readRunCounts(client)).toEqual({
      counts: { staged: SPLIT_MOST + 1, held: 1, running: 0, completed: 0, failed: 0, canceled: 2, lost: 0, rejected: 0, timeout: 0 },
      lumped: [],
      total: SPLIT_MOST + 4,
    });
    await client.cancelRuns(ids.slice(2));
    const { counts, lumped, total } = await readRunCounts(client);
    expect(counts).toEqual({ staged: 0, held: 1, running: 0, completed: 0 });
    expect(lumped).toEqual([{ name: 'ended-otherwise', label: 'failed, canceled, lost, rejected, timeout', count: SPLIT_MOST + 3 }]);
    expect(total).toBe(SPLIT_MOST + 4);
  });

  it(`read at most ${SHAPES_MOST} shapes, those whose first run is oldest, most runs first, and how many there are`, async () => {
    const client = await connectClient(newQueue());
    const requests = Array.from({ length: SHAPES_MOST + 10 }, (_, i) => ({ command: ['true'], resources: `cpu=${i + 1}`, repeat: i === 7 ? 3 : 1 }));
    await client.stage(requests);
    const shapes = await readStagedShapes(client);
    expect(shapes.total).toBe(SHAPES_MOST + 10);
    expect(shapes).toHaveLength(SHAPES_MOST);
    expect(shapes[0]).toMatchObject({ demands: 'cpu=8', count: 3 });
    expect(new Set(shapes.map((shape) => shape.demands))).toEqual(new Set(Array.from({ length: SHAPES_MOST }, (_, i) => `cpu=${i + 1}`)));
  });
});
