/**
 * History retention: the scripts that end runs remove the oldest ended runs
 * beyond the namespace's counts and age (a bounded batch per end), with
 * their keys, ids and a `removed` event; staged and running runs stay.
 * cleanRuns and setRetention remove at once.
 */
import { describe, expect, it } from 'vitest';
import { RunRemovedError, type FitqClient } from '../../src/client.js';
import { RETENTION_DEFAULTS } from '../../src/model/retention.js';
import { luaInclude } from '../../src/queue/lua-source.js';
import { Scripts } from '../../src/queue/scripts.js';
import { serverTimeMs } from '../../src/model/liveness.js';
import { connectClient, newQueue } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

/** Stages n runs and ends each completed, through the scripts a worker uses (no process). */
async function completeRuns(client: FitqClient, n: number, worker = 'w'): Promise<string[]> {
  const scripts = new Scripts(client.redis, client.keys, 100);
  const ids = (await client.stage({ command: ['true'], resources: 'slot=1', repeat: n })).runs.map((run) => run.id);
  await scripts.registerWorker({ name: worker, token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources: `slot=${n}` });
  for (const id of ids) {
    const claim = await scripts.claimRun(worker, 'tok', 0);
    expect(claim).toMatchObject({ code: 'claimed', runId: id });
    const { epoch } = claim as { epoch: string };
    await scripts.finishRun({ runId: id, worker, token: 'tok', epoch, status: 'completed', exitCode: 0, reason: 'exit code 0' });
    // The next ends in a later millisecond of the server's clock: no two end at once (ties would sort by id).
    const endedAt = Number(await client.redis.hget(client.keys.run(id), 'finishedOn'));
    await waitFor('the server clock to pass the end', async () => serverTimeMs(await client.redis.time()) > endedAt, 30_000, 1);
  }
  await scripts.deregisterWorker(worker, 'tok');
  return ids;
}

/** Stages n runs and cancels each while staged: they end canceled, one script call each. */
async function cancelRuns(client: FitqClient, n: number): Promise<string[]> {
  const ids = (await client.stage({ command: ['true'], resources: 'slot=1', repeat: n })).runs.map((run) => run.id);
  await client.cancelRuns(ids);
  return ids;
}

/** Moves a run's end into the past, as if it had ended `agoMs` ago. */
async function endedAgo(client: FitqClient, runId: string, state: 'completed' | 'failed', agoMs: number): Promise<void> {
  const finishedOn = Date.now() - agoMs;
  await client.redis.zadd(client.keys.queue.key(state), finishedOn, runId);
  await client.redis.hset(client.keys.run(runId), 'finishedOn', finishedOn);
}

/** Which of the ids still have any key (hash, output) or an id entry. */
async function present(client: FitqClient, ids: readonly string[]): Promise<string[]> {
  const left: string[] = [];
  for (const id of ids) {
    const keys = await client.redis.exists(client.keys.run(id), client.keys.runLog(id), client.keys.runPackedLog(id), `${client.keys.run(id)}:lock`);
    const listed = await client.redis.zscore(client.keys.ids, id);
    if (keys > 0 || listed !== null) left.push(id);
  }
  return left;
}

/** The run ids of `removed` events in the queue's event stream. */
async function removedEvents(client: FitqClient): Promise<{ jobId: string; prev: string }[]> {
  const entries = await client.redis.xrange(client.keys.queue.key('events'), '-', '+');
  return entries
    .map(([, fields]) => Object.fromEntries(fields.flatMap((_, i) => (i % 2 === 0 ? [[fields[i], fields[i + 1]]] : []))) as Record<string, string>)
    .filter((event) => event.event === 'removed')
    .map((event) => ({ jobId: event.jobId!, prev: event.prev! }));
}

describe('retention defaults', () => {
  it('the Lua include and the TS constant agree', async () => {
    const client = await connectClient(newQueue());
    // The include holding the defaults, as scripts get it, its defaults returned (its functions are only defined, never called).
    const lua = luaInclude('retention/retentionSettings');
    const defaults = JSON.parse(String(await client.redis.eval(`${lua}\nreturn cjson.encode(RETENTION_DEFAULTS)`, 0))) as unknown;
    expect(defaults).toEqual(RETENTION_DEFAULTS);
    expect(RETENTION_DEFAULTS).toEqual({ keepCompleted: 10_000, keepFailed: 10_000, keepAgeMs: 7 * 24 * 3600 * 1000 });
    expect(await client.getRetention()).toEqual({ retention: RETENTION_DEFAULTS, stored: [] });
  });
});

describe('retention as runs end', () => {
  it('by count: each end removes the oldest completed runs beyond keepCompleted, keys, id and all, with a removed event', async () => {
    const client = await connectClient(newQueue());
    await client.setRetention({ keepCompleted: 3 });
    const ids = await completeRuns(client, 7);
    expect(await client.redis.zrange(client.keys.queue.key('completed'), 0, -1)).toEqual(ids.slice(4));
    expect(await present(client, ids)).toEqual(ids.slice(4));
    expect(await client.redis.zrange(client.keys.ids, 0, -1)).toEqual([...ids.slice(4)].sort());
    expect(await removedEvents(client)).toEqual(ids.slice(0, 4).map((jobId) => ({ jobId, prev: 'completed' })));
    // Failed runs are counted apart: the default keeps them.
    const canceled = await cancelRuns(client, 5);
    expect(await present(client, canceled)).toEqual(canceled);
  });

  it("with keepCompleted off keeps every completed run, whatever keepFailed says (it once fell back on keepFailed's count)", async () => {
    const client = await connectClient(newQueue());
    await client.setRetention({ keepCompleted: null, keepFailed: 1 });
    const ids = await completeRuns(client, 3);
    expect(await present(client, ids)).toEqual(ids);
    // keepFailed still holds for the ended runs it counts.
    const canceled = await cancelRuns(client, 3);
    expect(await present(client, canceled)).toEqual(canceled.slice(2));
  });

  it('by count, when runs end in the same millisecond: the run just ended is kept and the next oldest goes instead', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    await client.stage(['tieb', 'tiec', 'tiea'].map((runId) => ({ runId, command: ['true'], resources: 'slot=1' })));
    for (const id of ['tieb', 'tiec', 'tiea']) expect((await scripts.cancelRun(id)).outcome).toBe('canceled');
    // As if they had ended in the same millisecond (the server's clock decides, so the test sets the tie):
    // the failed zset orders them by id, so the last to end (tiea) sorts first.
    const failed = client.keys.queue.key('failed');
    const endedAt = String(await client.redis.hget(client.keys.run('tiea'), 'finishedOn'));
    for (const id of ['tieb', 'tiec']) {
      await client.redis.zadd(failed, endedAt, id);
      await client.redis.hset(client.keys.run(id), 'finishedOn', endedAt);
    }
    expect(await client.redis.zrange(failed, 0, -1)).toEqual(['tiea', 'tieb', 'tiec']);
    // Retention as the script ending tiea applies it, under keepFailed 1.
    await scripts.setRetention([['keepFailed', '1']]);
    const trim = `${luaInclude('retention/trimEndedRuns')}\nreturn trimEndedRuns(ARGV[1], "failed", RETENTION_BATCH, ARGV[2])`;
    expect(await client.redis.eval(trim, 0, client.keys.base, 'tiea')).toBe(2);
    expect(await client.redis.zrange(failed, 0, -1)).toEqual(['tiea']);
  });

  it('failed covers failed, canceled, lost and rejected together; staged and running runs, and the run just ended, are never touched', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const scripts = new Scripts(client.redis, client.keys, 100);
    const waiting = (await client.stage({ command: ['true'], resources: 'other=1', repeat: 3 })).runs.map((run) => run.id);
    const running = (await client.stage({ command: ['true'], resources: 'slot=1' })).runs[0]!.id;
    await scripts.registerWorker({ name: 'busy', token: 't', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources: 'slot=1' });
    expect(await scripts.claimRun('busy', 't', 0)).toMatchObject({ code: 'claimed', runId: running });
    // Keep none: each ended run goes as the next one ends (its own end leaves it, to be read).
    await client.setRetention({ keepCompleted: 0, keepFailed: 0 });
    const canceled = await cancelRuns(client, 4);
    expect(await present(client, canceled)).toEqual(canceled.slice(3));
    expect(await client.readLog(canceled[3]!)).toEqual([expect.objectContaining({ kind: 'end', status: 'canceled' })]);
    expect(await present(client, [...waiting, running])).toEqual([...waiting, running]);
    expect((await client.getRun(waiting[0]!)).status).toBe('staged');
    expect((await client.getRun(running)).status).toBe('running');
    expect(await client.redis.zcard(client.keys.queue.key('failed'))).toBe(1);
    // The running run ends failed; then it goes too, its lock, output and all.
    await scripts.finishRun({ runId: running, worker: 'busy', token: 't', epoch: '1', status: 'failed', exitCode: 3, reason: 'exit code 3' });
    expect(await present(client, [...canceled, running])).toEqual([running]);
    await cancelRuns(client, 1);
    expect(await present(client, [running])).toEqual([]);
    expect(await present(client, waiting)).toEqual(waiting);
    await scripts.deregisterWorker('busy', 't');
  });

  it('by age: runs that ended longer ago than keepAgeMs go at the next end; off keeps them', async () => {
    const client = await connectClient(newQueue());
    await client.setRetention({ keepAgeMs: 3_600_000 });
    const [old1, old2, young] = await cancelRuns(client, 3);
    await endedAgo(client, old1!, 'failed', 2 * 3_600_000);
    await endedAgo(client, old2!, 'failed', 3_600_000 + 60_000);
    await endedAgo(client, young!, 'failed', 3_600_000 - 60_000);
    const [completedOld] = await completeRuns(client, 1);
    await endedAgo(client, completedOld!, 'completed', 2 * 3_600_000);

    // Only the state a run ends in is trimmed.
    const [next] = await cancelRuns(client, 1);
    expect(await present(client, [old1!, old2!, young!, next!, completedOld!])).toEqual([young, next, completedOld]);
    await completeRuns(client, 1, 'w2');
    expect(await present(client, [completedOld!])).toEqual([]);

    // No age limit: nothing is too old.
    await client.redis.hset(client.keys.settings, 'keepAgeMs', 'off');
    await endedAgo(client, young!, 'failed', 30 * 24 * 3_600_000);
    await cancelRuns(client, 1);
    expect(await present(client, [young!])).toEqual([young]);
  });

  it('removes at most 20 runs per end: a backlog goes a batch per ended run, or at once with setRetention', async () => {
    const client = await connectClient(newQueue());
    await cancelRuns(client, 250);
    // Lowered behind the scripts' back: only ends apply it.
    await client.redis.hset(client.keys.settings, 'keepFailed', '10');
    await cancelRuns(client, 1);
    expect(await client.redis.zcard(client.keys.queue.key('failed'))).toBe(231);
    await cancelRuns(client, 1);
    expect(await client.redis.zcard(client.keys.queue.key('failed'))).toBe(212);
    // Each end after takes 19 more (20 removed, itself added), down to the 10 kept.
    for (let ends = 0; (await client.redis.zcard(client.keys.queue.key('failed'))) > 10; ends++) {
      expect(ends).toBeLessThan(11);
      await cancelRuns(client, 1);
    }
    expect(await client.redis.zcard(client.keys.queue.key('failed'))).toBe(10);
    expect(await client.redis.zcard(client.keys.ids)).toBe(10);

    await client.redis.hset(client.keys.settings, 'keepFailed', 'off');
    await cancelRuns(client, 200);
    const changed = await client.setRetention({ keepFailed: 5 });
    expect(changed).toMatchObject({ removed: 205, stored: ['keepFailed'], retention: { keepFailed: 5 } });
    expect(await client.redis.zcard(client.keys.queue.key('failed'))).toBe(5);
    expect(await client.redis.zcard(client.keys.ids)).toBe(5);
  });
});

describe('a run removed while someone waits for its end', () => {
  it('is reported as removed, in one line', async () => {
    const client = await connectClient(newQueue());
    const [id] = (await client.stage({ command: ['true'], resources: 'nothing=1' })).runs.map((run) => run.id);
    const waiting = client.waitForEnd(id!);
    await client.removeRuns([id!]);
    const error = await waiting.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RunRemovedError);
    expect((error as Error).message).toBe(
      `run '${id}' was removed before its end could be read (fitq runs rm, fitq runs clean, or history retention: fitq retention)`,
    );
  });
});

describe('setRetention and cleanRuns', () => {
  it('stores off and counts, resets to the defaults, and an emptied namespace leaves nothing behind', async () => {
    const client = await connectClient(newQueue());
    const set = await client.setRetention({ keepCompleted: 0, keepFailed: null, keepAgeMs: 86_400_000 });
    expect(set).toEqual({
      retention: { keepCompleted: 0, keepFailed: null, keepAgeMs: 86_400_000 },
      stored: ['keepCompleted', 'keepFailed', 'keepAgeMs'],
      removed: 0,
    });
    expect(await client.redis.hgetall(client.keys.settings)).toEqual({ keepCompleted: '0', keepFailed: 'off', keepAgeMs: '86400000' });
    expect(await client.setRetention({ keepAgeMs: null })).toMatchObject({ retention: { keepAgeMs: null } });
    await expect(client.setRetention({ keepFailed: -1 })).rejects.toThrow("expected keepFailed to be a whole number from 0, or null, got '-1'");
    await expect(client.setRetention({ keepAgeMs: 0 })).rejects.toThrow("expected keepAgeMs to be a whole number of ms above 0, or null, got '0'");
    // Settings keep the namespace; a reset gives them up, and with them everything.
    const [id] = await cancelRuns(client, 1);
    await client.removeRuns([id!]);
    expect(await client.redis.exists(client.keys.seq)).toBe(1);
    expect(await client.setRetention({}, { reset: true })).toEqual({ retention: RETENTION_DEFAULTS, stored: [], removed: 0 });
    expect(await client.redis.keys(`${client.keys.base}*`)).toEqual([]);
  });

  it('cleanRuns removes the ended runs selected by status, age and keep; never staged or running ones', async () => {
    const client = await connectClient(newQueue());
    const completed = await completeRuns(client, 4);
    const canceled = await cancelRuns(client, 4);
    const staged = (await client.stage({ command: ['true'], resources: 'none=1', repeat: 2 })).runs.map((run) => run.id);
    for (const [i, id] of completed.entries()) await endedAgo(client, id, 'completed', (10 - i) * 3_600_000); // 10h … 7h ago
    for (const [i, id] of canceled.entries()) await endedAgo(client, id, 'failed', (10 - i) * 60_000); // 10 … 7 min ago

    expect(await client.cleanRuns({ statuses: ['completed'], olderThanMs: 8.5 * 3_600_000 })).toBe(2);
    expect(await present(client, completed)).toEqual(completed.slice(2));
    expect(await client.cleanRuns({ statuses: ['canceled'], keep: 3 })).toBe(1);
    expect(await present(client, canceled)).toEqual(canceled.slice(1));
    // keep and older-than together: both must hold.
    expect(await client.cleanRuns({ statuses: ['failed', 'canceled'], keep: 1, olderThanMs: 8.5 * 60_000 })).toBe(1);
    expect(await present(client, canceled)).toEqual(canceled.slice(2));
    expect(await client.cleanRuns({ statuses: ['lost'] })).toBe(0);
    await expect(client.cleanRuns({ statuses: ['staged'] })).rejects.toThrow(
      "only ended runs are cleaned: expected a status from completed, failed, canceled, lost, rejected, timeout, got 'staged'",
    );
    await expect(client.cleanRuns({ keep: -2 })).rejects.toThrow("expected keep to be a whole number from 0, got '-2'");
    expect(await client.cleanRuns()).toBe(4);
    expect(await present(client, [...completed, ...canceled])).toEqual([]);
    expect(await present(client, staged)).toEqual(staged);
    expect(await client.redis.zcard(client.keys.ids)).toBe(2);
  });

  it('cleanRuns works in batches through a long history, and an emptied namespace is forgotten', async () => {
    const client = await connectClient(newQueue());
    await cancelRuns(client, 1234);
    expect(await client.cleanRuns({ keep: 10 })).toBe(1224);
    expect(await client.redis.zcard(client.keys.queue.key('failed'))).toBe(10);
    expect(await client.cleanRuns({ statuses: ['canceled'] })).toBe(10);
    expect(await client.redis.keys(`${client.keys.base}*`)).toEqual([]);
  });
});
