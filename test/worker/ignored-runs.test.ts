/**
 * A worker logs, once each, the staged runs it can never run because it
 * lacks a resource they need: the first ones of each group of shapes, then
 * one line saying there are more, however many there are (it reads a
 * bounded number of runs each time the group changes).
 */
import { describe, expect, it } from 'vitest';
import { connectClient, messages, newQueue, startTestWorker } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

describe('runs a worker ignores', () => {
  it('are logged up to a hundred per group, then one line says there are more', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    // 150 shapes of one group (`lic`), 2 runs each; and a group of 3 runs.
    await client.stage(Array.from({ length: 150 }, (_, i) => ({ command: ['true'], resources: `lic=${i + 1}`, repeat: 2 })));
    const few = (await client.stage({ command: ['true'], resources: 'gpu=1', repeat: 3 })).runs.map((run) => run.id);
    const { worker, logs } = await startTestWorker(queue, { resources: 'cpu=1' });
    const ignored = () => messages(logs).filter((message) => message.startsWith('Ignoring'));
    await waitFor('both groups reported', () => ignored().some((m) => m.startsWith('Ignoring more')) && few.every((id) => ignored().some((m) => m.includes(id))));
    // Another run in the big group's oldest shape changes it: it is logged (among the first now), what was logged is not again.
    const [late] = (await client.stage({ command: ['true'], resources: 'lic=1' })).runs;
    await client.stage({ command: ['true'], resources: 'cpu=1' });
    await waitFor('the runnable run to end', async () => (await client.redis.zcard(client.keys.queue.key('completed'))) === 1);
    await worker.stop();
    const lines = ignored();
    expect(lines.filter((m) => m.includes('(requires resources not defined for this worker: lic)') && m.startsWith('Ignoring staged run '))).toHaveLength(101);
    expect(lines).toContain(`Ignoring staged run ${late!.id} (requires resources not defined for this worker: lic)`);
    expect(lines.filter((m) => m.startsWith('Ignoring more'))).toEqual(['Ignoring more staged runs than these 100 (requires resources not defined for this worker: lic): fitq runs shows them all']);
    for (const id of few) expect(lines).toContain(`Ignoring staged run ${id} (requires resources not defined for this worker: gpu)`);
    expect(new Set(lines).size).toBe(lines.length);
  });
});
