/**
 * The scripts' side of dependencies, through the client: bounded work for a
 * run with many dependents (the rest judged by reconciling), a dependency
 * removed by retention after it completed still counts, and parked runs
 * never reach the fit index before they may start.
 */
import { describe, expect, it } from 'vitest';
import { Scripts } from '../../src/queue/scripts.js';
import { connectClient, indexedShapes, newQueue, stagedShape, startTestWorker } from '../support/fitq.js';

describe('dependents', () => {
  it('a run with 250 dependents: its end judges about 100, reconciling the rest', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.stage({ command: ['true'], runId: 'root', resources: 'nowhere=1' });
    await client.stage({ command: ['true'], repeat: 250, after: [{ kind: 'ok', ids: ['root'] }] });
    expect(await client.redis.scard(client.keys.dependents('root'))).toBe(250);
    // The cancel script alone (the client's cancel reconciles after it).
    await new Scripts(client.redis, client.keys, 1000).cancelRun('root');
    const counts = async () => {
      const ids = await client.redis.smembers(client.keys.dependents('root'));
      const statuses = await Promise.all(ids.map((id) => client.redis.hget(client.keys.run(id), 'status')));
      return statuses.filter((status) => status === 'canceled').length;
    };
    // Too many for one script call: about 100 at once, the rest left to reconciling (where SSCAN stopped).
    expect(await client.redis.hget(client.keys.dependentsPending, 'root')).toMatch(/^[1-9]\d*$/);
    const first = await counts();
    expect(first).toBeGreaterThanOrEqual(90);
    expect(first).toBeLessThan(250);
    await client.reconcile();
    expect(await counts()).toBe(250);
    expect(await client.redis.exists(client.keys.dependentsPending)).toBe(0);
    const one = (await client.listRuns()).find((run) => run.id !== 'root')!;
    expect(one).toMatchObject({ status: 'canceled', reason: 'dependency root canceled (canceled while staged)', canceledFor: 'root' });
  });

  it('a dependency removed by retention after it completed still counts as completed', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.setRetention({ keepCompleted: 0 });
    await client.stage({ command: ['true'], runId: 'a' });
    await client.stage({ command: ['true'], runId: 'b', resources: 'nowhere=1' });
    await client.stage({ command: ['true'], runId: 'c', after: [{ kind: 'ok', ids: ['a', 'b'] }] });
    await client.stage({ command: ['true'], runId: 'd' });
    // A real worker runs `a` (its end judges `c`), then `d` (one at a time): retention (keep no completed run) then removes `a`.
    const { worker } = await startTestWorker(queue, { resources: 'cpu=1', concurrency: 1 });
    await client.waitForEnd('d');
    await worker.stop();
    expect(await client.redis.exists(client.keys.run('a'))).toBe(0);
    expect(await client.redis.hget(client.keys.run('c'), 'dep:a')).toBe('completed|exit code 0');
    expect((await client.getRun('c')).reason).toBe('waiting for dependency b (staged)');
    await client.cancelRun('b');
    expect((await client.getRun('c'))).toMatchObject({ status: 'canceled', reason: 'dependency b canceled (canceled while staged)' });
  });

  it('parked runs are in no staged index, held or delayed or waiting, until they may start', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.stage({ command: ['true'], runId: 'dep', resources: 'x=1' });
    await client.stage({ command: ['true'], runId: 'held', resources: 'y=1', hold: true });
    await client.stage({ command: ['true'], runId: 'later', resources: 'z=1', delayMs: 3_600_000 });
    await client.stage({ command: ['true'], runId: 'waits', resources: 'w=1', after: [{ kind: 'end', ids: ['dep'] }] });
    expect(await indexedShapes(client)).toEqual([stagedShape('x=1')]);
    await client.reconcile();
    expect(await indexedShapes(client)).toEqual([stagedShape('x=1')]);
    await client.releaseRuns(['held']);
    await client.cancelRun('dep');
    expect((await indexedShapes(client)).sort()).toEqual([stagedShape('w=1'), stagedShape('y=1')]);
    expect((await client.getRun('waits')).status).toBe('staged');
  });

  it('refuses, in one call, a run waiting for one staged after it, wherever it is in the call, staging nothing', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const run = (runId: string, after?: string) => ({ runId, command: ['true'], ...(after ? { after: [{ kind: 'ok' as const, ids: [after] }] } : {}) });
    await expect(client.stage([run('p'), run('q', 'r'), run('r')])).rejects.toThrow("dependency on 'r' would make a cycle");
    await expect(client.stage([run('p'), run('q'), run('s', 's')])).rejects.toThrow("dependency on 's' would make a cycle");
    expect(await client.redis.zcard(client.keys.ids)).toBe(0);
    // Earlier in the call is fine.
    await client.stage([run('p'), run('q', 'p')]);
    expect((await client.getRun('q')).waitingForDependencies).toBe(true);
  });
});
