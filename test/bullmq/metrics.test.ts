/**
 * BullMQ's job metrics on fitq runs: every run's end is counted where
 * Queue.getMetrics reads it, per minute, as BullMQ's own workers count them.
 */
import { describe, expect, it } from 'vitest';
import { luaInclude } from '../../src/queue/lua-source.js';
import { connectClient, newQueue, startTestWorker } from '../support/fitq.js';
import { openRunQueue } from '../support/bullmq.js';

const COUNT_ENDED = `${luaInclude('bullmq/countEnded')}
countEnded(ARGV[1], ARGV[2], tonumber(ARGV[3]))`;

describe('job metrics', () => {
  it('Queue.getMetrics counts completed and failed runs (canceled, rejected and lost ones are failed jobs)', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.stage([
      { command: ['true'], repeat: 3 },
      { command: ['sh', '-c', 'exit 2'], repeat: 2 },
    ]);
    const { runs: [staged] } = await client.stage({ command: ['true'], resources: 'never=1' });
    await client.cancelRun(staged!.id);
    const { worker } = await startTestWorker(queue, { name: 'm', runOnce: true });
    await worker.done;
    const bull = openRunQueue(client);
    expect((await bull.getMetrics('completed')).meta.count).toBe(3);
    expect((await bull.getMetrics('failed')).meta.count).toBe(3);
  });

  it('keeps one data point per minute, newest first: what ended in that minute, and 0 for idle minutes', async () => {
    const client = await connectClient(newQueue());
    const bull = openRunQueue(client);
    const start = Date.UTC(2026, 10, 23, 12, 0, 1);
    for (const offsetMs of [0, 10_000, 61_000, 300_000]) {
      await client.redis.eval(COUNT_ENDED, 0, client.keys.base, 'completed', start + offsetMs);
    }
    const metrics = await bull.getMetrics('completed');
    expect(metrics.meta).toEqual({ count: 4, prevTS: start + 300_000, prevCount: 3 });
    // Two ended in the first minute, one in the second, none in the three after it.
    expect(metrics.data).toEqual([0, 0, 0, 1, 2]);
    expect(metrics.count).toBe(5);
  });

  it('keeps a week of points at most, however long the queue was idle', async () => {
    const client = await connectClient(newQueue());
    const bull = openRunQueue(client);
    const start = Date.UTC(2026, 10, 1);
    for (const offsetMs of [0, 1_000, 30 * 24 * 3_600_000]) {
      await client.redis.eval(COUNT_ENDED, 0, client.keys.base, 'failed', start + offsetMs);
    }
    const metrics = await bull.getMetrics('failed', 0, 0);
    expect(metrics.count).toBe(7 * 24 * 60);
    expect(metrics.meta.count).toBe(3);
  });
});
