/**
 * The claim policy as users see it, with real processes: backfill that never
 * starves the next run in line, one holder per blocked head across workers,
 * priorities, and strict fifo for comparison.
 */
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import type { WorkerOptions } from '../../src/worker/worker.js';
import { connectClient, FIXTURES, newQueue, startTestWorker as startPolling } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

/**
 * A worker whose safety-net poll is ten minutes away: what it starts, it
 * starts because an event woke it (a run staged, ended, a hold moved), so
 * "at once" is checked by order, never by how long a loaded machine took.
 */
const startTestWorker = (queue: string, options: WorkerOptions = {}) => startPolling(queue, { pollIntervalMs: 600_000, ...options });

const STAMP = `${FIXTURES}stamp.sh`;

interface Span {
  start: number;
  end: number;
}

/** The [start, end] the run's own process printed. */
async function span(client: FitqClient, runId: string): Promise<Span> {
  const lines = (await client.readLog(runId)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []));
  const at = (word: string) => Number(lines.find((line) => line.startsWith(`${word} `))?.split(' ')[1]);
  return { start: at('start'), end: at('end') };
}

async function spans(client: FitqClient, ids: Record<string, string>): Promise<Record<string, Span>> {
  await Promise.all(Object.values(ids).map((id) => client.waitForEnd(id)));
  const entries = await Promise.all(Object.entries(ids).map(async ([name, id]) => [name, await span(client, id)] as const));
  return Object.fromEntries(entries);
}

const overlap = (a: Span, b: Span) => Math.max(a.start, b.start) < Math.min(a.end, b.end);

async function stage(client: FitqClient, resources: string, seconds: number, runId?: string): Promise<string> {
  const { runs } = await client.stage({ command: [STAMP, String(seconds)], resources, runId });
  return runs[0]!.id;
}

describe('backfill without starvation (the default policy)', () => {
  it('runs the seed GPU scenario in three run-lengths, in staging order', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const ids = {
      aaa: await stage(client, 'gpu0=1', 0.6, 'aaa'),
      bbb: await stage(client, 'gpu0=1', 0.6, 'bbb'),
      ccc: await stage(client, 'gpu0=1 gpu1=1', 0.6, 'ccc'),
      ddd: await stage(client, 'gpu1=1', 0.6, 'ddd'),
    };
    await startTestWorker(queue, { resources: 'gpu0=1 gpu1=1', runOnce: true });
    const { aaa, bbb, ccc, ddd } = await spans(client, ids);
    expect(overlap(aaa!, ddd!)).toBe(true); // ddd backfills beside aaa
    expect(bbb!.start).toBeGreaterThanOrEqual(aaa!.end); // bbb when aaa ends
    expect(ccc!.start).toBeGreaterThanOrEqual(Math.max(bbb!.end, ddd!.end)); // ccc last, never before the older bbb
    expect(overlap(bbb!, ccc!) || overlap(ddd!, ccc!)).toBe(false);
  });

  it('starts a big run as soon as the small runs before it end; later small runs never overtake it', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const first = [await stage(client, 'gpu=1', 1), await stage(client, 'gpu=1', 1)];
    const big = await stage(client, 'gpu=2', 0.3);
    await startTestWorker(queue, { resources: 'gpu=2' });
    // Small runs keep arriving until the big one has started.
    const later: string[] = [];
    await waitFor('the big run to start', async () => {
      later.push(await stage(client, 'gpu=1', 0.1));
      return (await client.getRun(big)).status !== 'staged';
    }, 20_000, 100);
    const bigRun = await client.waitForEnd(big);
    for (const id of first) expect((await client.getRun(id)).endedAt!).toBeLessThanOrEqual(bigRun.startedAt!);
    for (const id of later) {
      const run = await client.waitForEnd(id);
      expect(run.startedAt!).toBeGreaterThanOrEqual(bigRun.endedAt!);
    }
    expect(later.length).toBeGreaterThan(3);
  });

  it('holds a blocked head on one worker only; the other worker backfills', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const running = [await stage(client, 'gpu=1 cpu=1', 2), await stage(client, 'gpu=1 cpu=1', 2)];
    await startTestWorker(queue, { name: 'w1', resources: 'gpu=2 cpu=1' });
    await startTestWorker(queue, { name: 'w2', resources: 'gpu=2 cpu=1' });
    await waitFor('both first runs to run', async () =>
      (await Promise.all(running.map((id) => client.getRun(id)))).every((run) => run.status === 'running'),
    );
    const [big, small] = (
      await client.stage([
        { command: [STAMP, '0.2'], resources: 'gpu=2' },
        { command: [STAMP, '0.2'], resources: 'gpu=1' },
      ])
    ).runs.map((run) => run.id) as [string, string];
    const smallRun = await client.waitForEnd(small);
    const holds = await client.redis.hgetall(client.keys.holds);
    expect(Object.keys(holds)).toEqual([big]);
    const holder = holds[big]!;
    expect(smallRun.worker).not.toBe(holder);
    const firstRuns = await Promise.all(running.map((id) => client.getRun(id)));
    expect(smallRun.startedAt!).toBeLessThan(Math.min(...firstRuns.map((run) => run.endedAt ?? Infinity)));
    // It starts as soon as the holder (or any worker) has room for it.
    const bigRun = await client.waitForEnd(big);
    const ended = await Promise.all(running.map((id) => client.waitForEnd(id)));
    // On the holder, or on the other worker if its run ended first: once one of them has room.
    expect(bigRun.startedAt!).toBeGreaterThanOrEqual(Math.min(...ended.map((run) => run.endedAt!)));
    expect(await client.redis.hlen(client.keys.holds)).toBe(0);
  });

  it('lets another worker start a held run at once when it can', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const long = await stage(client, 'gpu=1', 3);
    await startTestWorker(queue, { name: 'busy', resources: 'gpu=2' });
    await waitFor('the long run to run', async () => (await client.getRun(long)).status === 'running');
    const big = await stage(client, 'gpu=2', 0.2);
    await waitFor('the busy worker to hold the big run', async () => (await client.redis.hget(client.keys.holds, big)) === 'busy');
    await startTestWorker(queue, { name: 'idle', resources: 'gpu=2' });
    const bigRun = await client.waitForEnd(big);
    expect(bigRun.worker).toBe('idle');
    expect(bigRun.startedAt!).toBeLessThan((await client.getRun(long)).endedAt ?? Infinity);
  });
});

describe('one blocked head per namespace, the oldest', () => {
  /** Two workers, each running a long run of its own (ra=1 or rb=1 keeps it there); returns the long runs. */
  async function twoBusyWorkers(queue: string, client: FitqClient, resourcesA: string, resourcesB: string): Promise<Record<'a' | 'b', string>> {
    const longs = { a: await stage(client, 'gpu=2 mem=8 ra=1', 30), b: await stage(client, 'gpu=2 mem=8 rb=1', 30) };
    await startTestWorker(queue, { name: 'a', resources: resourcesA, killGraceMs: 1000 });
    await startTestWorker(queue, { name: 'b', resources: resourcesB, killGraceMs: 1000 });
    await waitFor('both long runs to run', async () =>
      (await Promise.all(Object.values(longs).map((id) => client.getRun(id)))).every((run) => run.status === 'running'),
    );
    return longs;
  }

  it('while one worker holds a big run, the other starts later small runs beside the next big run; the held run starts when its worker has room', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const longs = await twoBusyWorkers(queue, client, 'gpu=4 mem=64 ra=1', 'gpu=4 mem=64 rb=1');
    const big = await stage(client, 'gpu=4 mem=16', 0.1);
    await waitFor('a worker to hold the big run', async () => (await client.redis.hget(client.keys.holds, big)) !== null);
    const holder = (await client.redis.hget(client.keys.holds, big)) as 'a' | 'b';
    const other = holder === 'a' ? 'b' : 'a';
    // The next big run is not held: the older one is, elsewhere.
    const next = await stage(client, 'gpu=4 mem=16', 0.1);
    // Small runs lack the gpu the big run waits for on its worker; the other worker runs them.
    const smalls: string[] = [];
    for (let i = 0; i < 6; i++) smalls.push(await stage(client, 'gpu=1 mem=4', 0.1));
    const smallRuns = await Promise.all(smalls.map((id) => client.waitForEnd(id)));
    expect(smallRuns.map((run) => run.worker)).toEqual(smalls.map(() => other));
    expect(await client.redis.hgetall(client.keys.holds)).toEqual({ [big]: holder });
    expect((await client.getRun(next)).reason).toMatch(/^waiting for resources: gpu=4 > 2 free on [ab]$/);
    // The big run starts as soon as the run on its worker at hold time ends, before the next big run.
    await client.cancelRun(longs[holder], { wait: true });
    const bigRun = await client.waitForEnd(big);
    const longRun = await client.getRun(longs[holder]);
    expect(bigRun.worker).toBe(holder);
    expect(bigRun.startedAt!).toBeGreaterThanOrEqual(longRun.endedAt!);
    // No run staged after it ran on its worker before it.
    for (const run of smallRuns) expect(run.worker).not.toBe(holder);
    const nextRun = await client.waitForEnd(next);
    expect(nextRun.startedAt!).toBeGreaterThanOrEqual(bigRun.startedAt!);
    await client.cancelRun(longs[other], { wait: true });
  });

  it('a run only one worker fits, older than the hold elsewhere, is held there; the other worker drops its hold at once and backfills', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const longA = await stage(client, 'gpu=2 mem=8 ra=1', 30);
    // a never polls: only events wake it. Only a has ra (the big run needs it).
    await startTestWorker(queue, { name: 'a', resources: 'gpu=4 mem=64 ra=2', killGraceMs: 1000 });
    await waitFor('the long run on a to run', async () => (await client.getRun(longA)).status === 'running');
    const big = await stage(client, 'gpu=4 mem=16 ra=1', 0.1);
    await waitFor('a to hold the big run', async () => (await client.redis.hget(client.keys.holds, big)) === 'a');
    // A later small run only a can run, held back for the big run (which lacks gpu).
    const small = await stage(client, 'gpu=1 mem=4 ra=1', 0.1);
    expect((await client.getRun(small)).reason).toBe(`held for older run ${big} on a: it needs gpu=4, 2 free, ra=1 of the 1 free`);
    // For b: a long run first (highest priority), then a run only b fits (x), older in order than the big run.
    const [longB, older] = (
      await client.stage([
        { command: [STAMP, '30'], resources: 'gpu=2 mem=8 rb=1', priority: 2 },
        { command: [STAMP, '0.1'], resources: 'gpu=4 x=1', priority: 1 },
      ])
    ).runs.map((run) => run.id) as [string, string];
    await startTestWorker(queue, { name: 'b', resources: 'gpu=4 mem=64 rb=1 x=1', killGraceMs: 1000 });
    // b starts its long run and holds the older run; a drops its hold and starts the small run beside its long run.
    const smallRun = await client.waitForEnd(small);
    expect(smallRun.worker).toBe('a');
    expect(smallRun.startedAt!).toBeLessThan((await client.getRun(longA)).endedAt ?? Infinity);
    expect(await client.redis.hgetall(client.keys.holds)).toEqual({ [older]: 'b' });
    expect((await client.getRun(big)).reason).toBe('waiting for resources: gpu=4 > 2 free on a');
    // The older run starts on b as soon as b's long run ends.
    await client.cancelRun(longB, { wait: true });
    const olderRun = await client.waitForEnd(older);
    expect(olderRun.worker).toBe('b');
    expect(olderRun.startedAt!).toBeGreaterThanOrEqual((await client.getRun(longB)).endedAt!);
    // Then the big run is the oldest blocked run: it starts on a when a's long run ends.
    await client.cancelRun(longA, { wait: true });
    const bigRun = await client.waitForEnd(big);
    expect(bigRun.worker).toBe('a');
    expect(bigRun.startedAt!).toBeGreaterThanOrEqual((await client.getRun(longA)).endedAt!);
  });

  it('when another worker starts the held run, its holder claims again at once and backfills', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const long = await stage(client, 'gpu=1 ra=1', 30);
    // a never polls: only events wake it. Only a has ra.
    await startTestWorker(queue, { name: 'a', resources: 'gpu=2 ra=2', killGraceMs: 1000 });
    await waitFor('the long run to run', async () => (await client.getRun(long)).status === 'running');
    const big = await stage(client, 'gpu=2', 0.1);
    await waitFor('a to hold the big run', async () => (await client.redis.hget(client.keys.holds, big)) === 'a');
    const small = await stage(client, 'gpu=1 ra=1', 0.1);
    expect((await client.getRun(small)).reason).toBe(`held for older run ${big} on a: it needs gpu=2, 1 free`);
    await startTestWorker(queue, { name: 'b', resources: 'gpu=2' });
    expect((await client.waitForEnd(big)).worker).toBe('b');
    const smallRun = await client.waitForEnd(small);
    expect(smallRun.worker).toBe('a');
    expect(smallRun.startedAt!).toBeLessThan((await client.getRun(long)).endedAt ?? Infinity);
    await client.cancelRun(long, { wait: true });
  });
});

describe('holding the blocked head by amount', () => {
  it('backfills a later run that leaves enough of every resource the head needs', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const long = await stage(client, 'gpu=2 mem=8', 30);
    await startTestWorker(queue, { name: 'box', resources: 'gpu=4 mem=64', killGraceMs: 1000 });
    await waitFor('the long run to run', async () => (await client.getRun(long)).status === 'running');
    // The head lacks gpu; the later run takes no gpu and leaves the head its mem.
    const head = await stage(client, 'gpu=4 mem=16', 0.1);
    await waitFor('the worker to hold the head', async () => (await client.redis.hget(client.keys.holds, head)) === 'box');
    const small = await stage(client, 'mem=32', 0.1);
    expect((await client.waitForEnd(small)).status).toBe('completed');
    expect((await client.getRun(head)).status).toBe('staged');
    await client.cancelRun(long, { wait: true });
    expect((await client.waitForEnd(head)).status).toBe('completed');
  });

  it('refuses a later run that would eat into what the head needs, or take what it lacks', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const long = await stage(client, 'gpu=2 mem=8', 30);
    await startTestWorker(queue, { name: 'box', resources: 'gpu=4 mem=64', killGraceMs: 1000 });
    await waitFor('the long run to run', async () => (await client.getRun(long)).status === 'running');
    const head = await stage(client, 'gpu=4 mem=16', 0.1);
    await waitFor('the worker to hold the head', async () => (await client.redis.hget(client.keys.holds, head)) === 'box');
    const eats = await stage(client, 'mem=48', 0.1); // 56 free: 8 would stay, the head needs 16
    const takes = await stage(client, 'gpu=1', 0.1); // the head lacks gpu
    const fits = await stage(client, 'mem=40', 0.1); // 16 stay: enough
    expect((await client.waitForEnd(fits)).status).toBe('completed');
    expect((await client.getRun(eats)).reason).toBe(`held for older run ${head} on box: it waits for gpu=4 (2 free), and needs mem=16 of the 56 free`);
    expect((await client.getRun(takes)).reason).toBe(`held for older run ${head} on box: it needs gpu=4, 2 free`);
    await client.cancelRun(long, { wait: true });
    const headRun = await client.waitForEnd(head);
    for (const id of [eats, takes]) expect((await client.waitForEnd(id)).startedAt!).toBeGreaterThanOrEqual(headRun.startedAt!);
  });

  it('on GPU devices, refuses a later run whose devices the head needs; places one that leaves them', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    // Halves pinned on devices 0 and 1 leave 3 GPUs free, but only devices 2 and 3 whole.
    const { runs: halves } = await client.stage([
      { command: [STAMP, '30'], resources: 'gpu=0.5 mem=40', gpus: '0' },
      { command: [STAMP, '30'], resources: 'gpu=0.5', gpus: '1' },
    ]);
    await startTestWorker(queue, { name: 'devbox', gpus: '0,1,2,3', resources: 'mem=64', killGraceMs: 1000 });
    await waitFor('the halves to run', async () =>
      (await Promise.all(halves.map((run) => client.getRun(run.id)))).every((run) => run.status === 'running'),
    );
    // The head could go on devices 2,3 now but lacks mem (24 free).
    const head = await stage(client, 'gpu=2 mem=32', 0.1);
    await waitFor('the worker to hold the head', async () => (await client.redis.hget(client.keys.holds, head)) === 'devbox');
    const whole = await stage(client, 'gpu=1', 0.1); // would take device 2
    const half = await stage(client, 'gpu=0.5', 0.1); // fits beside a pinned half
    const halfRun = await client.waitForEnd(half);
    expect(halfRun.devices).toEqual([0]);
    expect((await client.getRun(whole)).reason).toBe(`held for older run ${head} on devbox: it waits for mem=32 (24 free), and needs gpu=2 on the GPU devices this run would take`);
    await client.cancelRun(halves[0]!.id, { wait: true });
    const headRun = await client.waitForEnd(head);
    expect(headRun.devices).toHaveLength(2);
    expect((await client.waitForEnd(whole)).startedAt!).toBeGreaterThanOrEqual(headRun.startedAt!);
    await client.cancelRun(halves[1]!.id, { wait: true });
  });
});

describe('holds and stopping', () => {
  it('a stopping worker lets go of its blocked head at once, while its runs finish', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const long = await stage(client, 'gpu=1', 30);
    const { worker } = await startTestWorker(queue, { name: 'leaving', resources: 'gpu=2', killGraceMs: 1000 });
    await waitFor('the long run to run', async () => (await client.getRun(long)).status === 'running');
    const big = await stage(client, 'gpu=2', 0.1);
    await waitFor('the worker to hold the big run', async () => (await client.redis.hget(client.keys.holds, big)) === 'leaving');
    const stopped = worker.stop();
    await waitFor('the hold to go', async () => (await client.redis.hlen(client.keys.holds)) === 0);
    expect((await client.getRun(long)).status).toBe('running');
    await client.cancelRun(long, { wait: true });
    await stopped;
  });
});

describe('fifo policy', () => {
  it('blocks later runs behind the first that does not fit (head-of-line), as Dask does', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const ids = {
      aaa: await stage(client, 'gpu0=1', 0.5),
      bbb: await stage(client, 'gpu0=1', 0.5),
      ddd: await stage(client, 'gpu1=1', 0.5),
    };
    await startTestWorker(queue, { resources: 'gpu0=1 gpu1=1', runOnce: true, policy: 'fifo' });
    const { aaa, bbb, ddd } = await spans(client, ids);
    expect(overlap(aaa!, ddd!)).toBe(false);
    expect(ddd!.start).toBeGreaterThanOrEqual(aaa!.end);
    expect(bbb!.start).toBeGreaterThanOrEqual(aaa!.end);
  });
});

describe('why a run waits', () => {
  it('says which run is next in line and which runs are held for it', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const long = await stage(client, 'gpu=1', 30);
    await startTestWorker(queue, { name: 'box', resources: 'gpu=2', killGraceMs: 1000 });
    await waitFor('the long run to run', async () => (await client.getRun(long)).status === 'running');
    const big = await stage(client, 'gpu=2', 0.1);
    const small = await stage(client, 'gpu=1', 0.1);
    await waitFor('the worker to hold the big run', async () => (await client.redis.hget(client.keys.holds, big)) === 'box');
    expect((await client.getRun(big)).reason).toBe('next in line on box: waiting for gpu=2 > 1 free');
    expect((await client.getRun(small)).reason).toBe(`held for older run ${big} on box: it needs gpu=2, 1 free`);
    const listed = await client.listRuns({ statuses: ['staged'] });
    expect(listed.map((run) => [run.id, run.reason])).toEqual([
      [big, 'next in line on box: waiting for gpu=2 > 1 free'],
      [small, `held for older run ${big} on box: it needs gpu=2, 1 free`],
    ]);
    await client.cancelRun(long, { wait: true });
    expect((await client.waitForEnd(big)).status).toBe('completed');
    expect((await client.waitForEnd(small)).status).toBe('completed');
  });

  it('says when a fifo head blocks a run, when every fitting worker is full, and when devices cannot take a demand', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const long = await stage(client, 'gpu=1', 30);
    await startTestWorker(queue, { name: 'strict', resources: 'gpu=2 cpu=1', policy: 'fifo', killGraceMs: 1000 });
    await waitFor('the long run to run', async () => (await client.getRun(long)).status === 'running');
    const big = await stage(client, 'gpu=2', 0.1);
    const small = await stage(client, 'cpu=1', 0.1);
    await waitFor('the fifo worker to block on the big run', async () => (await client.listWorkers())[0]?.blockedBy === big);
    expect((await client.getRun(big)).reason).toBe('waiting for resources: gpu=2 > 1 free on strict');
    expect((await client.getRun(small)).reason).toBe(`behind older run ${big} on strict (policy fifo)`);
    await client.cancelRun(long, { wait: true });
    await client.waitForEnd(small);

    const queue2 = newQueue();
    const client2 = await connectClient(queue2);
    const busy = await stage(client2, 'cpu=1', 30);
    await startTestWorker(queue2, { name: 'single', resources: 'cpu=4', concurrency: 1, killGraceMs: 1000 });
    await waitFor('the busy run to run', async () => (await client2.getRun(busy)).status === 'running');
    const next = await stage(client2, 'cpu=1', 0.1);
    expect((await client2.getRun(next)).reason).toBe('waiting for a run slot: single runs its maximum of 1');
    await client2.cancelRun(busy, { wait: true });
    await client2.waitForEnd(next);

    const queue3 = newQueue();
    const client3 = await connectClient(queue3);
    await startTestWorker(queue3, { name: 'gpus', gpus: '0,1' });
    const { runs, warnings } = await client3.stage({ command: ['true'], resources: 'gpu=1.5' });
    expect(warnings).toEqual([
      `run ${runs[0]!.id} staged, but no live worker can run it yet: needs more than any live worker has: gpu=1.5 cannot be placed on GPU devices (use a whole number, or a fraction below 1)`,
    ]);
  });
});
