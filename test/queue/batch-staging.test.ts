/**
 * A large batch is staged in bounded script calls (chunks), so no call holds
 * Redis long, yet it is all or nothing to fitq's readers: its runs are hidden
 * until a final commit; a batch its stager gave up leaves nothing, and one
 * whose stager died is removed by claims once its deadline passed.
 */
import { describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import { REMOVE_CHUNK } from '../../src/operations/chunks.js';
import { runDataJson } from '../../src/model/run-data.js';
import { Scripts } from '../../src/queue/scripts.js';
import type { StageScriptRun } from '../../src/queue/run-calls.js';
import type { WorkerRegistration } from '../../src/queue/worker-calls.js';
import { prepareRuns, runShape } from '../../src/model/stage.js';
import { connectClient, newQueue, stagedShape } from '../support/fitq.js';
import { startRedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';
import { STAGE_CHUNK } from '../../src/operations/chunks.js';

const registrationOf = (name: string, resources: string): WorkerRegistration => ({
  name, token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources,
});

/** Runs as the stage script takes them, with ids `<prefix><i>`, in the shapes of this process's user (as the client's own). */
function scriptRuns(prefix: string, count: number, resources: string): StageScriptRun[] {
  return Array.from({ length: count }, (_, i) => {
    const [run] = prepareRuns({ command: ['true'], resources, runId: `${prefix}${i}` });
    return { id: run!.id, shape: stagedShape(runShape(run!)), priority: run!.priority, data: runDataJson(run!.fields, run!.priority) };
  });
}

const allIds = async (client: FitqClient) => client.selectRunIds([], {});

/** Script calls (EVAL, EVALSHA) and transactions (EXEC) Redis served since its stats were reset. */
async function scriptCalls(client: FitqClient): Promise<{ scripts: number; transactions: number }> {
  const stats = await client.redis.info('commandstats');
  const calls = (command: string) => Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(stats)?.[1] ?? 0);
  return { scripts: calls('evalsha') + calls('eval'), transactions: calls('exec') };
}

describe('staging a large batch', () => {
  it('shows a concurrent reader and claims none of the batch or all of it', async () => {
    // 60 chunks of STAGE_CHUNK, more than one part of ids a read takes (5,000); a reader reads them all each time
    // round, so 20,000 took a minute on an idle box and over two under load.
    const BATCH = 6_000;
    const queue = newQueue();
    const client = await connectClient(queue);
    const reader = await connectClient(queue);
    const scripts = new Scripts(reader.redis, reader.keys, 100);
    expect(await scripts.registerWorker(registrationOf('w', 'cpu=1'))).toBe(true);
    const counts = new Set<number>();
    let sawOpen = false;
    let claimed: string | undefined;
    let done = false;
    const staging = client.stage({ command: ['true'], resources: 'cpu=1', repeat: BATCH }).finally(() => {
      done = true;
    });
    while (!done) {
      sawOpen ||= (await reader.redis.hlen(reader.keys.batches)) > 0;
      counts.add((await allIds(reader)).length);
      if (!claimed) {
        const claim = await scripts.claimRun('w', 'tok', 0);
        if (claim.code === 'claimed') {
          claimed = claim.runId;
          // Only a committed batch gives a claim its runs.
          expect(await reader.redis.hlen(reader.keys.batches)).toBe(0);
        }
      }
    }
    const { runs } = await staging;
    counts.add((await allIds(reader)).length);
    expect([...counts].filter((count) => count !== 0 && count !== BATCH)).toEqual([]);
    expect(sawOpen).toBe(true);
    // The claim takes the batch's first run, in order.
    claimed ??= ((await scripts.claimRun('w', 'tok', 0)) as { runId: string }).runId;
    expect(claimed).toBe(runs[0]!.id);
    expect(await reader.redis.exists(reader.keys.batches)).toBe(0);
  });

  it('shows a reader that reads the ids in parts none of a batch staged and committed between two parts, or all of it', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    // More runs than one part of ids (5,000).
    await scripts.stageRuns(scriptRuns('m', 6_000, 'cpu=1'), undefined, { id: 'mid', ttlMs: 60_000, first: true });
    // As each read's first part of ids comes back, the stager adds 100 runs whose ids sort before that part's end
    // (so the read's next parts miss them); the third time, it commits the batch (a read of three attempts showed
    // the batch in part then).
    const reader = await connectClient(client.keys.base.slice(client.keys.base.indexOf('{') + 1, client.keys.base.indexOf('}')));
    const zrange = reader.redis.zrange.bind(reader.redis) as (...args: unknown[]) => Promise<string[]>;
    let added = 0;
    (reader.redis as unknown as { zrange: (...args: unknown[]) => Promise<string[]> }).zrange = async (...args) => {
      const part = await zrange(...args);
      if (args[1] === '-' && added < 3) {
        added++;
        await scripts.stageRuns(scriptRuns(`a${added}-`, 100, 'cpu=1'), undefined, { id: 'mid', ttlMs: 60_000, first: false });
        if (added === 3) expect(await scripts.commitBatch('mid')).toBe(6_300);
      }
      return part;
    };
    for (;;) {
      const count = (await allIds(reader)).length;
      expect([0, 6_300]).toContain(count);
      if (count === 6_300) break;
    }
    expect(added).toBe(3);
  });

  it('stages and removes in bounded script calls, never one long call (one MULTI, one removeRuns call held Redis for over 200 ms)', async () => {
    // How long a call holds Redis depends on the machine (npm run bench measures it); what bounds it is
    // that no call takes more than a chunk of runs: counted by Redis itself, per command.
    const server = await startRedisServer();
    const client = await FitqClient.connect({ redisUrl: server.url, queue: newQueue() });
    try {
      await client.redis.config('RESETSTAT');
      await client.stage({ command: ['true'], resources: 'cpu=1', repeat: 20_000 });
      expect(await client.redis.zcard(client.keys.staged(stagedShape('cpu=1')))).toBe(20_000);
      const staging = await scriptCalls(client);
      // A chunk per STAGE_CHUNK runs and the commit; nothing in MULTI.
      expect(staging.scripts).toBeGreaterThanOrEqual(20_000 / STAGE_CHUNK + 1);
      expect(staging.transactions).toBe(0);
      // Selecting every run reads the ids in parts (one ZRANGE of 100,000 held Redis 50 ms), each run once.
      await client.redis.config('RESETSTAT');
      const selected = await client.selectRunIds([], { statuses: ['staged'] });
      expect(new Set(selected).size).toBe(20_000);
      expect(selected).toHaveLength(20_000);
      const reads = Number(/^cmdstat_zrange:calls=(\d+)/m.exec(await client.redis.info('commandstats'))?.[1] ?? 0);
      expect(reads).toBeGreaterThanOrEqual(5);
      await client.redis.config('RESETSTAT');
      expect(await client.removeRuns(await client.redis.zrange(client.keys.ids, 0, -1))).toBe(20_000);
      const removing = await scriptCalls(client);
      expect(removing.scripts).toBeGreaterThanOrEqual(40);
      expect(removing.transactions).toBe(0);
      expect(await client.redis.keys(`${client.keys.base}*`)).toEqual([]);
    } finally {
      await client.close();
      await server.dispose();
    }
  });

  it('hides a batch whose stager died, and claims remove it once its deadline passed while other runs start in order', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker(registrationOf('w', 'cpu=1000'))).toBe(true);
    const claim = async () => scripts.claimRun('w', 'tok', 0);
    const [before] = (await client.stage({ command: ['true'], resources: 'cpu=1', runId: 'before' })).runs;
    // More than a claim drops at once (DROP_LIMIT 100), never committed.
    await scripts.stageRuns(scriptRuns('dead', 150, 'cpu=1'), undefined, { id: 'dead', ttlMs: 1500, first: true });
    await client.stage({ command: ['true'], resources: 'cpu=1', runId: 'after' });
    await client.stage({ command: ['true'], resources: 'cpu=2', runId: 'other' });

    expect(await allIds(client)).toEqual(['before', 'after', 'other']);
    await expect(client.getRun('dead0')).rejects.toThrow("unknown run 'dead0'");
    await expect(client.removeRuns(['dead0'])).rejects.toThrow("unknown run 'dead0'");
    await expect(client.cancelRun('dead0')).rejects.toThrow("unknown run 'dead0'");
    expect(await claim()).toMatchObject({ code: 'claimed', runId: before!.id });
    // Behind the open batch in its shape, `after` waits; another shape's run starts.
    expect(await claim()).toMatchObject({ code: 'claimed', runId: 'other' });
    expect((await claim()).code).not.toBe('claimed');

    // Past the deadline: still hidden, and claims remove it (100 a call), then start `after`.
    const next = await waitFor('a claim past the dead batch', async () => {
      const result = await claim();
      return result.code === 'claimed' ? result : undefined;
    });
    expect(next).toMatchObject({ runId: 'after' });
    expect(await client.redis.zcard(client.keys.ids)).toBe(3);
    expect(await client.redis.exists(client.keys.run('dead0'), client.keys.run('dead149'), client.keys.batches)).toBe(0);
    expect(await client.redis.zrange(client.keys.staged(stagedShape('cpu=1')), 0, -1)).toEqual([]);
    expect(await allIds(client)).toEqual(['before', 'after', 'other']);
  });

  it('leaves nothing staged when a later chunk is refused (a run id taken)', async () => {
    const client = await connectClient(newQueue());
    await client.stage({ command: ['true'], runId: 'taken' });
    const requests = Array.from({ length: 1200 }, (_, i) => ({ command: ['true'], runId: i === 1100 ? 'taken' : `r${i}` }));
    await expect(client.stage(requests)).rejects.toThrow("run id 'taken' is already taken");
    expect(await allIds(client)).toEqual(['taken']);
    expect(await client.redis.zrange(client.keys.ids, 0, -1)).toEqual(['taken']);
    expect(await client.redis.zrange(client.keys.staged(stagedShape('none')), 0, -1)).toEqual(['taken']);
    expect(await client.redis.exists(client.keys.run('r0'), client.keys.run('r1099'), client.keys.batches)).toBe(0);
  });
});

describe('a committed batch', () => {
  it('leaves no `batch` field in its runs (it means nothing once committed)', async () => {
    const client = await connectClient(newQueue());
    const { runs } = await client.stage({ command: ['true'], resources: 'cpu=1', repeat: 1200 });
    const fields = await Promise.all(runs.map((run) => client.redis.hget(client.keys.run(run.id), 'batch')));
    expect(fields.filter((field) => field !== null)).toEqual([]);
    expect(await client.redis.exists(client.keys.batches)).toBe(0);
  });

  it('settleBatch clears only its own id, and nothing while the batch is still open', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const runs = scriptRuns('s', 3, 'cpu=1');
    await scripts.stageRuns(runs, undefined, { id: 'b', ttlMs: 60_000, first: true });
    const ids = runs.map((run) => run.id);
    expect(await scripts.settleBatch('b', ids)).toBe(0);
    expect(await client.redis.hget(client.keys.run('s0'), 'batch')).toBe('b');
    expect(await scripts.commitBatch('b')).toBe(3);
    await client.redis.hset(client.keys.run('s2'), 'batch', 'other');
    expect(await scripts.settleBatch('b', [...ids, 'gone'])).toBe(2);
    expect(await client.redis.hmget(client.keys.run('s0'), 'batch', 'status')).toEqual([null, 'staged']);
    expect(await client.redis.hget(client.keys.run('s2'), 'batch')).toBe('other');
    expect(await client.redis.exists(client.keys.run('gone'))).toBe(0);
    expect(await allIds(client)).toEqual(['s0', 's1', 's2']);
  });
});

describe('giving a batch up', () => {
  it('removes nothing of a batch already committed (a stager that lost the commit\'s reply)', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const runs = scriptRuns('c', 3, 'cpu=1');
    await scripts.stageRuns(runs, undefined, { id: 'b', ttlMs: 60_000, first: true });
    expect(await allIds(client)).toEqual([]);
    expect(await scripts.commitBatch('b')).toBe(3);
    expect(await scripts.abortBatch('b', runs.map((run) => run.id), true)).toBe(0);
    expect(await allIds(client)).toEqual(['c0', 'c1', 'c2']);
    await expect(scripts.commitBatch('b')).rejects.toThrow('staging took longer than the batch may stay open');
  });
});

describe('a `batches` key written by hand as another type', () => {
  it('holds no batch: runs are listed, shown and claimed', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker(registrationOf('w', 'cpu=1'))).toBe(true);
    await client.stage({ command: ['true'], resources: 'cpu=1', runId: 'marked' });
    await client.redis.hset(client.keys.run('marked'), 'batch', 'b');
    await client.redis.set(client.keys.batches, 'not a hash');
    expect(await allIds(client)).toEqual(['marked']);
    expect(await client.getRun('marked')).toMatchObject({ id: 'marked', status: 'staged' });
    expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'claimed', runId: 'marked' });
  });
});

describe('removing many runs', () => {
  it('removes more than one call takes, in parts, and leaves the namespace empty', async () => {
    const client = await connectClient(newQueue());
    const { runs } = await client.stage({ command: ['true'], resources: 'cpu=1', repeat: 2500 });
    expect(await client.removeRuns(runs.map((run) => run.id))).toBe(2500);
    expect(await client.redis.keys(`${client.keys.base}*`)).toEqual([]);
  });

  it('says how many it removed when a later part is refused', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker(registrationOf('w', 'cpu=1'))).toBe(true);
    await client.stage({ command: ['true'], resources: 'cpu=1', runId: 'busy' });
    expect(await scripts.claimRun('w', 'tok', 0)).toMatchObject({ code: 'claimed', runId: 'busy' });
    const { runs } = await client.stage({ command: ['true'], repeat: 4 * REMOVE_CHUNK - 1 });
    const ids = runs.map((run) => run.id);
    // In the third part: the first two go.
    ids.splice(2 * REMOVE_CHUNK + 10, 0, 'busy');
    await expect(client.removeRuns(ids)).rejects.toThrow(
      `removed ${2 * REMOVE_CHUNK} of ${4 * REMOVE_CHUNK} runs, then stopped: run 'busy' is running: cancel it first, or use --force`,
    );
    expect((await allIds(client)).length).toBe(2 * REMOVE_CHUNK);
  });
});
