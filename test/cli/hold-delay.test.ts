/**
 * Hold and delay through the real CLI and real workers: a held run is never
 * claimed and says why, released it starts at its original place in the
 * order; a run staged with --delay or --begin waits out of the fit index
 * (BullMQ's delayed) and a worker starts it on time by itself; BullMQ sees
 * parked runs as delayed / waiting-children, and its promote begins a
 * delayed run now.
 */
import { describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue } from '../support/fitq.js';
import { openRunQueue } from '../support/bullmq.js';

const ids = (stdout: string) => stdout.trim().split('\n');

describe('fitq hold / release', () => {
  it('a held run is never claimed and says why; released, it goes back to its original place in the order', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    // Three runs of one shape: the held middle one keeps its place (seq) while held.
    for (const id of ['first', 'middle', 'last']) expect((await fitq(['stage', '-r', 'slot=1', '--run-id', id, '--', 'true'], { queue })).exitCode).toBe(0);
    const held = await fitq(['hold', 'middle', 'first'], { queue });
    expect(held.exitCode, held.stderr).toBe(0);
    expect(held.stdout).toBe('Run middle held (fitq release middle to let it start)\nRun first held (fitq release first to let it start)');
    expect((await fitq(['hold', 'middle'], { queue })).stdout).toBe('Run middle is already held');
    const listed = (JSON.parse((await fitq(['runs', '--json'], { queue })).stdout) as { runs: { id: string; status: string; reason?: string }[] }).runs;
    expect(listed.map(({ id, status, reason }) => [id, status, reason])).toEqual([
      ['first', 'held', 'held (fitq release first to let it start)'],
      ['middle', 'held', 'held (fitq release middle to let it start)'],
      ['last', 'staged', 'no live worker'],
    ]);
    const worker = spawnCliWorker(queue, ['-r', 'slot=1', '--name', 'holder']);
    await worker.waitForMessage('Run last completed');
    // Nothing else starts while they are held, whatever the worker polls.
    const runs = await client.listRuns();
    expect(runs.map((run) => run.status)).toEqual(['held', 'held', 'completed']);
    // Both released at once: they start in their original order.
    const released = await fitq(['release', '--label', 'none=none'], { queue });
    expect([released.exitCode, released.stderr]).toEqual([1, 'No runs match --status held --label none=none: nothing to release.']);
    expect((await fitq(['release', 'middle', 'first', '--json'], { queue })).exitCode).toBe(0);
    await worker.waitForMessage('Run middle completed');
    const ended = (await client.listRuns()).filter((run) => run.id !== 'last').sort((a, b) => a.startedAt! - b.startedAt!);
    expect(ended.map((run) => [run.id, run.status])).toEqual([['first', 'completed'], ['middle', 'completed']]);
  });

  it('holding a running or ended run is refused per run, with its status (exit 1); the others are held', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const done = ids((await fitq(['stage', '--', 'true'], { queue })).stdout)[0]!;
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'refuser']);
    await worker.waitForMessage(`Run ${done} completed`);
    const running = ids((await fitq(['stage', '-r', 'cpu=1', '--', 'sleep', '30'], { queue })).stdout)[0]!;
    await worker.waitForMessage(`Run ${running} started`);
    const staged = ids((await fitq(['stage', '-r', 'cpu=1', '--', 'true'], { queue })).stdout)[0]!;
    const result = await fitq(['hold', done, running, staged, '--json'], { queue });
    expect(result.exitCode).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual([
      { id: done, outcome: 'refused', status: 'completed', message: `Run ${done} is completed: only a staged run can be held` },
      { id: running, outcome: 'refused', status: 'running', message: `Run ${running} is running: only a staged run can be held` },
      { id: staged, outcome: 'held', message: `Run ${staged} held (fitq release ${staged} to let it start)` },
    ]);
    expect((await fitq(['hold', 'nosuchrun'], { queue })).stderr).toMatch(/unknown run 'nosuchrun'/);
    expect((await fitq(['release', running], { queue })).stdout).toBe(`Run ${running} is running: only a staged run can be released`);
    expect((await client.getRun(staged)).status).toBe('held');
    await fitq(['cancel', running], { queue });
    // A held run can be canceled.
    expect((await fitq(['cancel', staged], { queue })).stdout).toBe(`Run ${staged} canceled`);
  });

  it('stage --hold stages it held; BullMQ counts it as waiting-children', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const id = ids((await fitq(['stage', '--hold', '--', 'true'], { queue })).stdout)[0]!;
    const bull = await openRunQueue(client);
    expect(await bull.getJobCounts('prioritized', 'waiting-children', 'delayed')).toEqual({ prioritized: 0, 'waiting-children': 1, delayed: 0 });
    expect(await bull.getJobState(id)).toBe('waiting-children');
    await fitq(['release', id], { queue });
    expect(await bull.getJobCounts('prioritized', 'waiting-children', 'delayed')).toEqual({ prioritized: 1, 'waiting-children': 0, delayed: 0 });
  });
});

describe('fitq stage --delay / --begin', () => {
  it('a delayed run waits out of the index, says when it begins, and a worker starts it on time without polling', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    // The worker is idle when the run is staged: only its begin-time timer can wake it in time (it polls every 5 s).
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'timely']);
    await worker.waitForMessage(/^Worker resources/);
    const staged = await fitq(['stage', '--delay', '1500ms', '--json', '--', 'true'], { queue });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const [run] = JSON.parse(staged.stdout) as { id: string; stagedAt: number }[];
    const shown = await client.getRun(run!.id);
    expect(shown.reason).toMatch(/^begins at (\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d$/); // local time
    expect(await client.redis.zscore(client.keys.queue.key('delayed'), run!.id)).not.toBeNull();
    expect(await client.redis.zcard(client.keys.queue.key('prioritized'))).toBe(0);
    await worker.waitForMessage(`Run ${run!.id} completed`);
    const ended = await client.getRun(run!.id);
    const waited = ended.startedAt! - ended.stagedAt;
    expect(waited).toBeGreaterThanOrEqual(1500);
    expect(waited).toBeLessThan(4000);
  });

  it('--begin takes ISO times, HH:MM and now+DURATION; bad values are refused quoting them (exit 2)', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const later = new Date(Date.now() + 3_600_000);
    const hhmm = `${String(later.getHours()).padStart(2, '0')}:${String(later.getMinutes()).padStart(2, '0')}`;
    for (const begin of [later.toISOString(), hhmm, 'now+1h']) {
      const result = await fitq(['stage', '--begin', begin, '--json', '--', 'true'], { queue });
      expect(result.exitCode, result.stderr).toBe(0);
      const id = (JSON.parse(result.stdout) as { id: string }[])[0]!.id;
      const run = await client.getRun(id);
      expect(run.beginAt! - Date.now(), begin).toBeGreaterThan(3_400_000);
      expect(run.beginAt! - Date.now(), begin).toBeLessThan(3_700_000);
    }
    for (const [args, message] of [
      [['--begin', 'tomorrow'], "expected --begin to be an ISO 8601 time (2026-05-01T08:00), HH:MM[:SS] or now+DURATION (now+10m), got 'tomorrow'"],
      [['--begin', '25:00'], "got '25:00'"],
      [['--delay', '10'], "expected --delay to be a duration such as 7d, 12h, 30m or 1h30m (a number needs a unit: ms, s, m, h, d or w), got '10'"],
      [['--begin', 'now', '--delay', '1m'], "give --begin 'now' or --delay '1m', not both"],
    ] as const) {
      const result = await fitq(['stage', ...args, '--', 'true'], { queue });
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
    }
  });

  it("BullMQ's promote of a delayed run begins it now; reconciling never puts a parked run in the index", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const delayed = ids((await fitq(['stage', '--delay', '1h', '--', 'true'], { queue })).stdout)[0]!;
    const held = ids((await fitq(['stage', '--hold', '--delay', '1h', '--', 'true'], { queue })).stdout)[0]!;
    const bull = await openRunQueue(client);
    expect(await bull.getJobState(delayed)).toBe('delayed');
    expect(await bull.getJobCounts('delayed', 'waiting-children')).toEqual({ delayed: 1, 'waiting-children': 1 });
    // Reconciling (fitq runs does) leaves both where they are.
    expect((await fitq(['runs'], { queue })).exitCode).toBe(0);
    expect(await bull.getJobCounts('delayed', 'waiting-children', 'prioritized')).toEqual({ delayed: 1, 'waiting-children': 1, prioritized: 0 });
    await (await bull.getJob(delayed))!.promote();
    const worker = spawnCliWorker(queue, ['-r', 'cpu=1', '--name', 'promoted']);
    await worker.waitForMessage(`Run ${delayed} completed`);
    expect((await client.getRun(held)).status).toBe('held');
    expect(await bull.getJobState(held)).toBe('waiting-children');
  });
});
