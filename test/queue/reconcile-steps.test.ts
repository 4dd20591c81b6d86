/**
 * Reconciling in bounded steps (reconcileRuns-*.lua): what BullMQ removed
 * leaves the fit index through a sweep of the index that goes a bounded
 * number of entries per call, from where the last call stopped (the
 * `index` field of `reconcile`), so a pass over more entries than one call
 * looks at takes several calls, misses none, and can stop between any two.
 */
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { Scripts } from '../../src/queue/scripts.js';
import type { ReconcileAction } from '../../src/queue/run-calls.js';
import { connectClient, indexedShapes, newQueue, redisUrl, stagedShape } from '../support/fitq.js';

const opened: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const instance of opened.splice(0).reverse()) await instance.close();
});

/** A budget far below what the tests stage: every pass takes several calls. */
const BUDGET = 20;

function bullQueue(client: FitqClient): Queue {
  const { hostname, port } = new URL(redisUrl());
  const bull = new Queue(client.keys.queue.name, { prefix: client.keys.queue.prefix, connection: { host: hostname, port: Number(port) } });
  opened.push(bull);
  return bull;
}

/** Stages `perShape` runs of `true` in each of `shapes` shapes (`nowhere=1` …: no worker runs them); their ids by shape. */
async function stageShapes(client: FitqClient, shapes: number, perShape: number): Promise<string[][]> {
  const requests = Array.from({ length: shapes }, (_, i) => ({ command: ['true'], resources: `nowhere=${i + 1}`, repeat: perShape }));
  const { runs } = await client.stage(requests);
  return Array.from({ length: shapes }, (_, i) => runs.slice(i * perShape, (i + 1) * perShape).map((run) => run.id));
}

/** Reconcile calls until one says it is done, at most `most`: how many, and what they did. */
async function reconcileUntilDone(scripts: Scripts, most = 500): Promise<{ count: number; actions: ReconcileAction[] }> {
  const actions: ReconcileAction[] = [];
  for (let count = 1; count <= most; count++) {
    const result = await scripts.reconcileRuns(BUDGET);
    actions.push(...result.actions);
    if (!result.more) return { count, actions };
  }
  throw new Error(`reconciling was not done after ${most} calls`);
}

/** Every entry of the fit index: run ids of every `staged:<shape>`. */
async function indexEntries(client: FitqClient): Promise<string[]> {
  const entries: string[] = [];
  for (const shape of await indexedShapes(client)) entries.push(...(await client.redis.zrange(client.keys.staged(shape), 0, -1)));
  return entries.sort();
}

describe('reconciling in bounded steps', () => {
  it('runs BullMQ removed across many shapes leave the fit index over several calls, and no other run does', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const byShape = await stageShapes(client, 60, 3);
    expect((await reconcileUntilDone(scripts)).actions).toEqual([]);

    // One run of every shape removed by BullMQ (job.remove: a `removed` event each).
    const bull = bullQueue(client);
    const removed = byShape.map((ids) => ids[1]!);
    for (const id of removed) await bull.remove(id);
    const { count, actions } = await reconcileUntilDone(scripts);
    expect(count).toBeGreaterThan(3);
    expect(actions.filter((action) => action.kind === 'forgotten').map((action) => action.runId).sort()).toEqual([...removed].sort());
    const kept = byShape.flatMap((ids) => [ids[0]!, ids[2]!]).sort();
    expect(await indexEntries(client)).toEqual(kept);
    expect((await client.redis.zrange(client.keys.ids, 0, -1)).sort()).toEqual(kept);
    // Done: the next call has nothing to do.
    expect(await scripts.reconcileRuns(BUDGET)).toEqual({ more: false, actions: [] });
  });

  it('a drain of more runs than a call looks at is forgotten over several calls, and leaves no key', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    await stageShapes(client, 40, 5);
    await reconcileUntilDone(scripts);
    await bullQueue(client).drain();
    const { count, actions } = await reconcileUntilDone(scripts);
    expect(count).toBeGreaterThan(5);
    expect(actions.filter((action) => action.kind === 'forgotten')).toHaveLength(200);
    expect(await client.redis.keys(`${client.keys.base}*`)).toEqual([]); // a test server: KEYS is fine
  });

  it('runs removed while a sweep is under way, in shapes it has passed, leave the index too (the sweep starts over)', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const byShape = await stageShapes(client, 60, 3);
    await reconcileUntilDone(scripts);
    const bull = bullQueue(client);
    await bull.remove(byShape[0]![0]!);
    // A few calls: the sweep is under way, past some shapes.
    for (let i = 0; i < 3; i++) expect((await scripts.reconcileRuns(BUDGET)).more).toBe(true);
    expect(await client.redis.hget(client.keys.reconcile, 'index')).not.toBeNull();
    // Then one run of every shape goes.
    const removed = byShape.map((ids) => ids[2]!);
    for (const id of removed) await bull.remove(id);
    await reconcileUntilDone(scripts);
    const kept = byShape.flatMap((ids, i) => (i === 0 ? [ids[1]!] : [ids[0]!, ids[1]!])).sort();
    expect(await indexEntries(client)).toEqual(kept);
  });

  it('stopping between any two calls leaves a state the next caller (another client) completes', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const byShape = await stageShapes(client, 50, 2);
    await reconcileUntilDone(scripts);
    const bull = bullQueue(client);
    for (const ids of byShape) await bull.remove(ids[0]!);
    for (let stopAfter = 1; ; stopAfter++) {
      // One call by this caller, which then stops (a worker killed between two calls).
      const { more } = await scripts.reconcileRuns(BUDGET);
      // Between the calls: every run left in the index is a staged run, or one BullMQ removed (a claim drops it if it meets it first).
      for (const id of await indexEntries(client)) {
        const status = await client.redis.hget(client.keys.run(id), 'status');
        expect(status === 'staged' || status === null, id).toBe(true);
      }
      if (!more) break;
      expect(stopAfter).toBeLessThan(500);
    }
    // Another client's reconcile finds nothing left.
    const other = await connectClient(client.keys.queue.name);
    expect(await other.reconcile()).toEqual([]);
    expect(await indexEntries(client)).toEqual(byShape.map((ids) => ids[1]!).sort());
  });

  it('a sweep position written by hand starts the sweep again', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const byShape = await stageShapes(client, 10, 2);
    await reconcileUntilDone(scripts);
    await client.redis.hset(client.keys.reconcile, 'index', 'not|a position', 'indexUrgent', '1');
    await bullQueue(client).remove(byShape[3]![0]!);
    await reconcileUntilDone(scripts);
    expect(await indexEntries(client)).toEqual(byShape.flatMap((ids, i) => (i === 3 ? [ids[1]!] : ids)).sort());
  });

  it('an idle call sweeps at a slow pace and says it is done', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    await stageShapes(client, 30, 4);
    await reconcileUntilDone(scripts);
    // A run's job deleted by hand (no event, no counter moved): the slow sweep finds it, and then hurries.
    const [gone] = await client.redis.zrange(client.keys.staged(stagedShape('nowhere=30')), 0, 0);
    await client.redis.del(client.keys.run(gone!));
    let calls = 0;
    while ((await client.redis.zscore(client.keys.ids, gone!)) !== null) {
      await scripts.reconcileRuns(BUDGET);
      expect(++calls).toBeLessThan(200);
    }
    await reconcileUntilDone(scripts);
    expect(await indexEntries(client)).not.toContain(gone);
    expect(await indexEntries(client)).toHaveLength(119);
  });

  it('dependents canceled in a cascade wider than a call judges are all canceled over several calls', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    await client.stage({ command: ['true'], resources: 'nowhere=1', runId: 'root' });
    const children = Array.from({ length: 120 }, (_, i) => `child${i}`);
    await client.stage(children.map((runId) => ({ command: ['true'], resources: 'nowhere=1', runId, after: [{ kind: 'ok' as const, ids: ['root'] }] })));
    const grandchildren = children.flatMap((child) => [`${child}a`, `${child}b`]);
    await client.stage(grandchildren.map((runId) => ({ command: ['true'], resources: 'nowhere=1', runId, after: [{ kind: 'ok' as const, ids: [runId.slice(0, -1)] }] })));
    await client.cancelRuns(['root']);
    // Not all in the cancel's call: the rest is in dependents-pending, for reconcile calls.
    expect(await client.redis.exists(client.keys.dependentsPending)).toBe(1);
    const { count } = await reconcileUntilDone(scripts);
    expect(count).toBeGreaterThan(1);
    const statuses = await Promise.all([...children, ...grandchildren].map((id) => client.redis.hget(client.keys.run(id), 'status')));
    expect(new Set(statuses)).toEqual(new Set(['canceled']));
    expect(await client.redis.exists(client.keys.dependentsPending)).toBe(0);
  });
});
