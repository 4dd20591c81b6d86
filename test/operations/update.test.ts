/**
 * FitqClient.updateRuns and its script against a real redis-server: the
 * staged index, BullMQ's view and reconciling agree after an edit; runs kept
 * out of the index (held, parked) stay out; per-run outcomes of runs that
 * moved on; concurrent edits all land.
 */
import { describe, expect, it } from 'vitest';
import { Scripts } from '../../src/queue/scripts.js';
import { openRunQueue } from '../support/bullmq.js';
import { connectClient, indexedShapes, newQueue, readRunData, stagedShape, startTestWorker } from '../support/fitq.js';

/** fitq's priority as BullMQ's (lua/includes/bullmq/bullPriority.lua), and a staged run's score. */
const bull = (priority: number) => 1_000_001 - priority;
const score = (priority: number, seq: number) => String(bull(priority) * 2 ** 32 + seq);

describe('updateRuns', () => {
  it('moves a run to its new shape and score, as BullMQ sees it; a reconcile pass then changes nothing', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { runs } = await client.stage([
      { command: ['true'], resources: 'cpu=1', labels: { team: 'a' } },
      { command: ['true'], resources: 'cpu=1' },
    ]);
    const [a, b] = runs.map((run) => run.id) as [string, string];
    const results = await client.updateRuns([a], { priority: 7, resources: 'cpu=0 gpu=1 mem=2G', labels: { team: 'b', x: '1' }, gpus: '3' });
    expect(results).toEqual([
      {
        id: a,
        outcome: 'updated',
        changes: [
          { field: 'priority', from: '0', to: '7' },
          { field: 'resources', from: 'cpu=1', to: 'gpu=1 mem=2G' },
          { field: 'gpus', from: 'none', to: '3' },
          { field: 'labels', from: 'team=a', to: 'team=b x=1' },
        ],
        run: expect.objectContaining({ id: a, status: 'staged', priority: 7, requires: 'gpu=1 mem=2G', pinnedGpus: [3] }),
      },
    ]);
    const shape = stagedShape('gpu=1,mem=2000000000;gpus=3');
    const seq = (await client.getRun(a)).seq;
    expect(await client.redis.hmget(client.keys.run(a), 'shape', 'score', 'priority')).toEqual([shape, score(7, seq), String(bull(7))]);
    expect(await client.redis.zrange(`${client.keys.base}staged:${shape}`, 0, -1, 'WITHSCORES')).toEqual([a, score(7, seq)]);
    expect(await client.redis.zrange(`${client.keys.base}staged:${stagedShape('cpu=1')}`, 0, -1)).toEqual([b]);
    expect(await indexedShapes(client)).toEqual([stagedShape('cpu=1'), shape]);
    expect(await client.redis.zrange(client.keys.queue.key('prioritized'), 0, -1)).toEqual([a, b]);
    const job = await openRunQueue(client).getJob(a);
    expect([job?.priority, job?.opts.priority, (job?.data as { priority: number }).priority]).toEqual([bull(7), bull(7), 7]);
    const stream = await client.redis.xrange(client.keys.queue.key('events'), '-', '+');
    expect(stream.map(([, fields]) => fields).filter((fields) => fields[1] === 'updated')).toEqual([
      ['event', 'updated', 'jobId', a, 'changes', 'priority,resources,gpus,labels'],
    ]);

    // A full reconcile pass (as after BullMQ's changePriority) finds nothing to change.
    const snapshot = async () => [
      await client.redis.hgetall(client.keys.run(a)),
      await client.redis.zrange(client.keys.queue.key('prioritized'), 0, -1, 'WITHSCORES'),
      await client.redis.zrange(`${client.keys.base}staged:${shape}`, 0, -1, 'WITHSCORES'),
    ];
    const before = await snapshot();
    await client.redis.hset(client.keys.reconcile, 'pass', 'ids:');
    expect(await client.reconcile()).toEqual([]);
    expect(await snapshot()).toEqual(before);

    // Back to priority 0: its place among runs of priority 0 is where it was staged.
    await client.updateRuns([a], { priority: 0 });
    expect(await client.redis.zrange(client.keys.queue.key('prioritized'), 0, -1)).toEqual([a, b]);
    await client.updateRuns([a], { priority: -1 });
    expect(await client.redis.zrange(client.keys.queue.key('prioritized'), 0, -1)).toEqual([b, a]);
  });

  it('a new time limit moves the run to the shape of its limit; its time signal is kept and checked; none removes both', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { runs } = await client.stage({ command: ['true'], resources: 'cpu=1', timeLimit: '1h', timeSignal: 'USR1@10m' });
    const id = runs[0]!.id;
    expect(await client.updateRuns([id], { timeLimit: 7_200_000 })).toEqual([
      expect.objectContaining({ outcome: 'updated', changes: [{ field: 'timeLimit', from: '1h', to: '2h' }] }),
    ]);
    expect(await client.redis.hmget(client.keys.run(id), 'shape')).toEqual([stagedShape('cpu=1;t=7200000')]);
    expect(await client.redis.zrange(`${client.keys.base}staged:${stagedShape('cpu=1;t=7200000')}`, 0, -1)).toEqual([id]);
    expect(await indexedShapes(client)).toEqual([stagedShape('cpu=1;t=7200000')]);
    expect(await readRunData(client, id)).toMatchObject({ timeLimit: 7_200_000, timeSignal: 'SIGUSR1@10m' });
    await expect(client.updateRuns([id], { timeLimit: '5m' })).rejects.toThrow("--time-signal 'SIGUSR1@10m' would come at or before the run's start: its time limit is 5m");
    expect(await client.updateRuns([id], { timeLimit: null })).toEqual([
      expect.objectContaining({ changes: [{ field: 'timeLimit', from: '2h', to: 'none' }, { field: 'timeSignal', from: 'SIGUSR1@10m', to: 'none' }] }),
    ]);
    expect(await indexedShapes(client)).toEqual([stagedShape('cpu=1')]);
  });

  it('changes only the demands named, as specs or a map of amounts (0 removes one); the others stay as typed', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const [run] = (await client.stage({ command: ['true'], resources: ['gpu=1', 'mem=8G cpu=0.5'] })).runs;
    const [specs] = await client.updateRuns([run!.id], { resources: 'cpu=2,lic=1' });
    expect(specs).toMatchObject({ changes: [{ field: 'resources', from: 'gpu=1 mem=8G cpu=0.5', to: 'gpu=1 mem=8G cpu=2 lic=1' }] });
    const [amounts] = await client.updateRuns([run!.id], { resources: new Map([['mem', 0n], ['gpu', 2_000_000n], ['disk', 5n * 10n ** 15n]]) });
    expect(amounts).toMatchObject({ changes: [{ field: 'resources', from: 'gpu=1 mem=8G cpu=2 lic=1', to: 'gpu=2 cpu=2 lic=1 disk=5G' }] });
    expect(await readRunData(client, run!.id)).toMatchObject({ resources: 'cpu=2 disk=5000000000 gpu=2 lic=1', requires: 'gpu=2 cpu=2 lic=1 disk=5G' });
    expect(await client.redis.hget(client.keys.run(run!.id), 'shape')).toBe(stagedShape('cpu=2,disk=5000000000,gpu=2,lic=1'));
  });

  it('new demands of a run of an array with a limit keep its demand of the limit', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { runs } = await client.stage({ command: ['true'], resources: 'never=1', array: { indices: [0, 1], limit: 1 } });
    const [run] = runs;
    const limit = `array.${run!.array!}`;
    await client.updateRuns([run!.id], { resources: 'never=0 cpu=1' });
    expect((await readRunData(client, run!.id)).resources).toBe(`${limit}=1 cpu=1`);
    expect(await client.redis.hget(client.keys.run(run!.id), 'shape')).toBe(stagedShape(`${limit}=1,cpu=1`));
    expect((await client.getRun(run!.id)).requires).toBe('cpu=1');
  });

  it('a run kept out of the index (held, or parked while staged) is edited and stays out of it', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const scripts = new Scripts(client.redis, client.keys, client.logMaxLines);
    const { runs } = await client.stage([{ command: ['true'], resources: 'cpu=1' }, { command: ['true'], resources: 'cpu=1' }]);
    const [held, parked] = runs.map((run) => run.id) as [string, string];
    // As a hold or a dependency keeps them: out of the staged index and BullMQ's order.
    for (const id of [held, parked]) {
      await client.redis.zrem(`${client.keys.base}staged:${stagedShape('cpu=1')}`, id);
      await client.redis.zrem(client.keys.queue.key('prioritized'), id);
    }
    await client.redis.hset(client.keys.run(held), 'status', 'held');
    await client.redis.hdel(client.keys.groups, 'cpu');
    await client.redis.del(client.keys.group('cpu'));

    // The script itself for the parked run (reconciling, as updateRuns does first, today puts a staged run missing from the index back).
    const data = String(await client.redis.hget(client.keys.run(parked), 'data'));
    const edited = JSON.stringify({ ...(JSON.parse(data) as object), resources: 'cpu=2', priority: 4 });
    expect(await scripts.updateRuns([{ id: parked, expectedData: data, data: edited, shape: stagedShape('cpu=2'), priority: 4, changes: 'resources' }])).toEqual([
      { outcome: 'updated' },
    ]);
    await client.redis.hset(client.keys.run(parked), 'status', 'held');
    expect((await client.updateRuns([held], { resources: 'cpu=2', priority: 4 }))[0]?.outcome).toBe('updated');
    for (const id of [held, parked]) {
      const seq = Number(await client.redis.hget(client.keys.run(id), 'seq'));
      expect(await client.redis.hmget(client.keys.run(id), 'shape', 'score')).toEqual([stagedShape('cpu=2'), score(4, seq)]);
      expect(await readRunData(client, id)).toMatchObject({ resources: 'cpu=2', priority: 4 });
    }
    expect(await client.redis.exists(`${client.keys.base}staged:${stagedShape('cpu=2')}`, `${client.keys.base}staged:${stagedShape('cpu=1')}`)).toBe(0);
    expect(await client.redis.zcard(client.keys.queue.key('prioritized'))).toBe(0);
    expect(await indexedShapes(client)).toEqual([]);
    // A worker does not start them.
    const { worker } = await startTestWorker(queue, { resources: 'cpu=4', runOnce: true });
    await worker.done;
    expect((await client.getRun(held)).status).toBe('held');
  });

  it('the script leaves a run that moved on or changed since it was read, and says so; the others are updated', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const scripts = new Scripts(client.redis, client.keys, client.logMaxLines);
    const { runs } = await client.stage({ command: ['true'], resources: 'cpu=1', repeat: 3 });
    const [ok, claimed, edited] = runs.map((run) => run.id) as [string, string, string];
    const data = await Promise.all(runs.map(async (run) => String(await client.redis.hget(client.keys.run(run.id), 'data'))));
    await client.redis.hset(client.keys.run(claimed), 'status', 'running');
    const edit = (id: string, expectedData: string) => ({ id, expectedData, data: expectedData.replace('"cpu=1"', '"cpu=2"'), shape: stagedShape('cpu=2'), priority: 0, changes: 'resources' });
    expect(await scripts.updateRuns([edit(ok, data[0]!), edit(claimed, data[1]!), edit(edited, 'older data'), edit('gone1', 'x')])).toEqual([
      { outcome: 'updated' },
      { outcome: 'status', status: 'running' },
      { outcome: 'changed' },
      { outcome: 'gone' },
    ]);
    expect(await client.redis.zrange(`${client.keys.base}staged:${stagedShape('cpu=2')}`, 0, -1)).toEqual([ok]);
    expect(await client.redis.zrange(`${client.keys.base}staged:${stagedShape('cpu=1')}`, 0, -1)).toEqual([claimed, edited]);
  });

  it('concurrent edits of one run all land: one made from data changed meanwhile is made again', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { runs } = await client.stage({ command: ['true'] });
    const id = runs[0]!.id;
    const results = await Promise.all([1, 2, 3, 4].map((i) => client.updateRuns([id], { labels: { [`k${i}`]: String(i) } })));
    expect(results.flat().map((result) => result.outcome)).toEqual(['updated', 'updated', 'updated', 'updated']);
    expect((await client.getRun(id)).labels).toEqual({ k1: '1', k2: '2', k3: '3', k4: '4' });
  });

  it('refuses what it cannot do, naming it, before writing anything', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { runs } = await client.stage({ command: ['true'], resources: 'gpu=2', gpus: '0,1' });
    const id = runs[0]!.id;
    const before = await client.redis.hgetall(client.keys.run(id));
    for (const [changes, message] of [
      [{ command: ['rm'] }, "cannot update 'command': a run's priority, resources, labels, unlabel, gpus, timeLimit may be updated"],
      [{ priority: 1.5 }, "expected --priority to be an integer within ±1000000, got '1.5'"],
      [{ resources: 'gpu=1' }, `run '${id}': --gpus '0,1' pins 2 devices but the run demands gpu=1: list 1 device`],
      [{ labels: { a: '1' }, unlabel: ['a'] }, "label 'a' is both set and removed"],
      [{ resources: 'gpu=-1' }, "invalid resource spec 'gpu=-1'"],
      [{ labels: { 'a b': '1' } }, "invalid label name 'a b'"],
    ] as const) {
      await expect(client.updateRuns([id], changes as never)).rejects.toThrow(message);
    }
    await expect(client.updateRuns([id, 'nosuch'], { priority: 1 })).rejects.toThrow("unknown run 'nosuch'");
    expect(await client.redis.hgetall(client.keys.run(id))).toEqual(before);
    // Unpinned and resized together, it goes.
    expect((await client.updateRuns([id], { resources: 'gpu=1', gpus: null }))[0]).toMatchObject({ outcome: 'updated', run: { requires: 'gpu=1' } });
    expect((await client.getRun(id)).pinnedGpus).toBeUndefined();
  });
});
