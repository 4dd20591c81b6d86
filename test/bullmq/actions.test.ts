/**
 * What BullMQ's API (and Bull Board, which calls it) may do to a fitq
 * namespace's queue: each action behaves as a BullMQ user expects or is
 * refused clearly, and never corrupts fitq's accounting. After every action
 * the worker's free capacity, its GPU devices and the pool are whole again
 * once nothing runs, fitq's index holds exactly the jobs BullMQ holds, and
 * `fitq runs` agrees with BullMQ's job counts.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import type { RunRecord, RunStatus } from '../../src/model/run-record.js';
import { Scripts } from '../../src/queue/scripts.js';
import type { ReconcileAction } from '../../src/queue/run-calls.js';
import { connectClient, fitq, indexedShapes, messages, newQueue, redisUrl, stagedShape, startTestWorker } from '../support/fitq.js';
import { BULLMQ_STATE } from '../support/bullmq.js';
import { waitFor } from '../support/wait.js';

/** The worker of every test: cpu=4 and two GPU devices; the namespace's pool: lic=2. */
const WORKER = 'w1';
const FREE = { cpu: '4', gpu: '2' };
const DEVICES = { 0: '1', 1: '1' };
const SECRET = 'actions-test-secret';
/** Why fitq refuses a job added without fitq's run data. */
const NOT_A_RUN = "rejected: not a fitq run (added without fitq's run data)";

const opened: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const instance of opened.splice(0).reverse()) await instance.close();
});

interface Setup {
  queue: string;
  client: FitqClient;
  bull: Queue;
  logs: Record<string, unknown>[];
  /** A directory for gate files. */
  dir: string;
}

/** A namespace with a pool, a worker with two GPU devices (unless `worker` is false), and the namespace's BullMQ queue. */
async function setup(options: { secret?: boolean; worker?: boolean } = {}): Promise<Setup> {
  const queue = newQueue();
  let client: FitqClient;
  if (options.secret) {
    client = await FitqClient.connect({ redisUrl: redisUrl(), queue, secret: SECRET });
    opened.push(client);
  } else {
    client = await connectClient(queue);
  }
  await client.setPool('lic=2');
  const { logs } = options.worker === false ? { logs: [] } : await startTestWorker(queue, {
    name: WORKER,
    resources: 'cpu=4',
    gpus: [0, 1],
    // Short intervals: BullMQ's actions are noticed (and heartbeats come) quickly.
    pollIntervalMs: 100,
    leaseMs: 3000,
    killGraceMs: 1000,
    ...(options.secret ? { secret: SECRET } : {}),
  });
  const { hostname, port } = new URL(redisUrl());
  const bull = new Queue(client.keys.queue.name, { prefix: client.keys.queue.prefix, connection: { host: hostname, port: Number(port) } });
  opened.push(bull);
  return { queue, client, bull, logs, dir: mkdtempSync(join(tmpdir(), 'fitq-actions-')) };
}

/** A command that waits until `gate` exists, then exits with `code`. */
function gated(gate: string, code = 0): string[] {
  return ['sh', '-c', 'while [ ! -e "$1" ]; do sleep 0.02; done; exit "$2"', 'sh', gate, String(code)];
}

function open(gate: string): void {
  writeFileSync(gate, '');
}

async function statusOf(client: FitqClient, id: string): Promise<string | null> {
  return client.redis.hget(client.keys.run(id), 'status');
}

async function waitForStatus(client: FitqClient, id: string, status: RunStatus, timeoutMs = 15_000): Promise<void> {
  await waitFor(`run ${id} to be ${status}`, async () => (await statusOf(client, id)) === status, timeoutMs);
}

/** Waits until nothing is reserved: the worker's free capacity and devices are its whole capacity, the pool is unused. */
async function expectWhole(client: FitqClient): Promise<void> {
  const w = client.keys.worker(WORKER);
  const read = async () => ({
    free: await client.redis.hgetall(w.free),
    devices: await client.redis.hgetall(w.devices),
    poolUsed: (await client.redis.hget(client.keys.poolUsed, 'lic')) ?? '0',
    running: await client.redis.hget(w.info, 'running'),
    runs: await client.redis.smembers(w.runs),
  });
  const whole = { free: FREE, devices: DEVICES, poolUsed: '0', running: '0', runs: [] };
  try {
    await waitFor('the reservations to be released', async () => JSON.stringify(await read()) === JSON.stringify(whole));
  } catch {
    expect(await read()).toEqual(whole);
  }
}


/**
 * fitq's list of runs (with `cli`, `fitq runs --json` itself), read as
 * BullMQ left the queue (reads never reconcile), agrees with BullMQ's job
 * counts and states; once reconciled, as a worker's next poll does, fitq's
 * index holds exactly the runs that exist. Returns the runs.
 */
async function expectAgreement(setup: Setup, options: { cli?: boolean } = {}): Promise<RunRecord[]> {
  const { client, bull, queue } = setup;
  let runs: RunRecord[];
  if (options.cli) {
    const listed = await fitq(['runs', '--json'], { queue });
    expect(listed.exitCode, listed.stderr).toBe(0);
    runs = (JSON.parse(listed.stdout) as { runs: RunRecord[] }).runs;
  } else {
    runs = await client.listRuns();
  }
  const counts = await bull.getJobCounts('prioritized', 'wait', 'delayed', 'active', 'completed', 'failed');
  const expected = { prioritized: 0, wait: 0, delayed: 0, active: 0, completed: 0, failed: 0 } as Record<string, number>;
  for (const run of runs) expected[BULLMQ_STATE[run.status]]! += 1;
  expect(counts).toEqual(expected);
  for (const run of runs) expect(await bull.getJobState(run.id), run.id).toBe(BULLMQ_STATE[run.status]);
  await client.reconcile();
  const ids = await client.redis.zrange(client.keys.ids, 0, -1);
  expect(ids.sort()).toEqual(runs.map((run) => run.id).sort());
  // No staged index entry of a run that is not staged.
  const staged = new Set(runs.filter((run) => run.status === 'staged').map((run) => run.id));
  for (const shape of await indexedShapes(client)) {
    for (const id of await client.redis.zrange(client.keys.staged(shape), 0, -1)) expect(staged.has(id), `${id} in staged:${shape}`).toBe(true);
  }
  return runs;
}

function scheduled(logs: readonly Record<string, unknown>[]): string[] {
  return messages(logs).flatMap((message) => /^Scheduling run (\S+)/.exec(message)?.slice(1) ?? []);
}

describe('BullMQ actions on a fitq namespace', () => {
  it('retry (job.retry) of a failed or canceled run stages it again with its demands; it runs and completes', async () => {
    const s = await setup();
    const { client, bull } = s;
    const flag = join(s.dir, 'flag');
    const [failing] = (await client.stage({ command: ['sh', '-c', 'test -e "$1"', 'sh', flag], resources: 'cpu=1 gpu=1 lic=1', retries: 1 })).runs;
    await waitForStatus(client, failing!.id, 'failed');
    const [canceled] = (await client.stage({ command: ['true'], resources: 'cpu=1 nowhere=1' })).runs;
    await client.cancelRun(canceled!.id);
    await expectWhole(client);
    await expectAgreement(s);

    open(flag);
    await (await bull.getJob(failing!.id))!.retry('failed');
    await waitForStatus(client, failing!.id, 'completed');
    const run = await client.getRun(failing!.id);
    expect(run).toMatchObject({ status: 'completed', exitCode: 0, epoch: 2, devices: [0], resources: { cpu: 1, gpu: 1, lic: 1 }, retries: 1 });
    expect(run.restaged).toBeUndefined();
    expect(await bull.getJobState(failing!.id)).toBe('completed');
    expect(scheduled(s.logs).filter((id) => id === failing!.id)).toHaveLength(2);
    // Its log says it was staged again, between its two attempts.
    expect((await client.readLog(failing!.id)).map((entry) => entry.kind)).toEqual(['end', 'restaged', 'end']);

    // A run canceled while staged comes back staged, waiting for what it needs.
    await (await bull.getJob(canceled!.id))!.retry('failed');
    await waitForStatus(client, canceled!.id, 'staged');
    expect(await client.getRun(canceled!.id)).toMatchObject({ status: 'staged', resources: { cpu: 1, nowhere: 1 } });
    expect(await client.redis.zscore(client.keys.staged(stagedShape('cpu=1,nowhere=1')), canceled!.id)).not.toBeNull();

    await expectWhole(client);
    const runs = await expectAgreement(s, { cli: true });
    expect(runs.map((r) => [r.id, r.status])).toEqual([[failing!.id, 'completed'], [canceled!.id, 'staged']]);
  });

  it('retry (job.retry) of a run that ended timeout stages it again; it runs and completes', async () => {
    const s = await setup();
    const { client, bull } = s;
    const flag = join(s.dir, 'flag');
    const [slow] = (await client.stage({ command: ['sh', '-c', 'test -e "$1" || exec sleep 30', 'sh', flag], resources: 'cpu=1', timeLimit: '1s' })).runs;
    await waitForStatus(client, slow!.id, 'timeout');
    open(flag);
    await (await bull.getJob(slow!.id))!.retry('failed');
    await waitForStatus(client, slow!.id, 'completed');
    expect(await client.getRun(slow!.id)).toMatchObject({ status: 'completed', exitCode: 0, epoch: 2 });
    await expectWhole(client);
    await expectAgreement(s);
  });

  it('fitq runs show reads a run as BullMQ left it, with no worker or listing having caught up first', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const bull = new Queue(client.keys.queue.name, { prefix: client.keys.queue.prefix, connection: { url: redisUrl() } });
    try {
      const [run] = (await client.stage({ command: ['true'], resources: 'nowhere=1' })).runs;
      await client.cancelRun(run!.id);
      await (await bull.getJob(run!.id))!.retry('failed');
      const shown = await fitq(['runs', 'show', run!.id, '--json'], { queue });
      expect(JSON.parse(shown.stdout)).toMatchObject({ id: run!.id, status: 'staged', resources: { nowhere: 1 } });
    } finally {
      await bull.close();
    }
  });

  it('remove (job.remove) of a staged run: never claimed afterwards, no ghost; of an ended run: its output goes too', async () => {
    const s = await setup();
    const { client, bull } = s;
    const [done] = (await client.stage({ command: ['echo', 'hello'] })).runs;
    await waitForStatus(client, done!.id, 'completed');
    const gate = join(s.dir, 'gate');
    const [holder] = (await client.stage({ command: gated(gate), resources: 'gpu=2 lic=2' })).runs;
    await waitForStatus(client, holder!.id, 'running');
    const [removed] = (await client.stage({ command: ['true'], resources: 'gpu=1 lic=1' })).runs;
    const [after] = (await client.stage({ command: ['true'], resources: 'gpu=1' })).runs;

    await (await bull.getJob(removed!.id))!.remove();
    await (await bull.getJob(done!.id))!.remove();
    expect(await bull.getJob(removed!.id)).toBeUndefined();
    open(gate);
    await waitForStatus(client, after!.id, 'completed');
    expect(scheduled(s.logs)).not.toContain(removed!.id);
    expect(await client.redis.exists(client.keys.run(removed!.id))).toBe(0); // no ghost made it again
    await expectWhole(client);
    const runs = await expectAgreement(s, { cli: true });
    expect(runs.map((r) => r.id)).toEqual([holder!.id, after!.id]);
    expect(await client.redis.exists(client.keys.runLog(done!.id), client.keys.runPackedLog(done!.id))).toBe(0);
    // fitq's commands no longer know them.
    const show = await fitq(['runs', 'show', removed!.id], { queue: s.queue });
    expect(show.stderr).toContain(`unknown run '${removed!.id}'`);
  });

  it('promote (job.promote) is refused by BullMQ for a fitq run (never delayed); a delayed plain job is rejected, never run', async () => {
    const s = await setup();
    const { client, bull } = s;
    const [staged] = (await client.stage({ command: ['true'], resources: 'nowhere=1' })).runs;
    const before = await client.redis.hgetall(client.keys.run(staged!.id));
    await expect((await bull.getJob(staged!.id))!.promote()).rejects.toThrow(/is not in the delayed state/);
    expect(await client.redis.hgetall(client.keys.run(staged!.id))).toEqual(before);

    const plain = await bull.add('plain', { any: 'data' }, { delay: 60_000 });
    await waitFor('the plain job to be rejected', async () => (await bull.getJobState(plain.id!)) === 'failed');
    await expect(plain.promote()).rejects.toThrow(/is not in the delayed state/);
    expect((await bull.getJob(plain.id!))!.failedReason).toBe(NOT_A_RUN);
    await expectWhole(client);
    const runs = await expectAgreement(s, { cli: true });
    expect(runs.find((run) => run.id === plain.id)).toMatchObject({ status: 'rejected', reason: NOT_A_RUN.slice('rejected: '.length) });
    expect(scheduled(s.logs)).toEqual([]);
  });

  it('changePriority (job.changePriority) of an unsigned staged run moves it in fitq\'s order; priority 0 is fitq\'s default', async () => {
    const s = await setup();
    const { client, bull } = s;
    const gate = join(s.dir, 'gate');
    const [holder] = (await client.stage({ command: gated(gate), resources: 'gpu=2' })).runs;
    await waitForStatus(client, holder!.id, 'running');
    const { runs: queued } = await client.stage({ command: ['true'], resources: 'gpu=2', repeat: 3, priority: 5 });
    const [first, second, third] = queued.map((run) => run.id) as [string, string, string];

    await (await bull.getJob(third))!.changePriority({ priority: 1 }); // BullMQ's highest: fitq's 1,000,000
    await (await bull.getJob(first))!.changePriority({ priority: 0 }); // no priority: fitq's default, 0
    await waitFor('the new priorities to be applied', async () =>
      (await client.getRun(third)).priority === 1_000_000 && (await client.getRun(first)).priority === 0);
    expect(await bull.getJobCounts('wait')).toEqual({ wait: 0 });
    const listed = await expectAgreement(s);
    expect(listed.map((run) => [run.id, run.priority])).toEqual([[holder!.id, 0], [first, 0], [second, 5], [third, 1_000_000]]);

    open(gate);
    for (const id of [first, second, third]) await waitForStatus(client, id, 'completed');
    expect(scheduled(s.logs)).toEqual([holder!.id, third, second, first]);
    await expectWhole(client);
    await expectAgreement(s, { cli: true });
  });

  it('changePriority of a signed run is undone (its priority is signed) and it still runs in its signed order', async () => {
    const s = await setup({ secret: true });
    const { client, bull } = s;
    const gate = join(s.dir, 'gate');
    const [holder] = (await client.stage({ command: gated(gate), resources: 'gpu=2' })).runs;
    await waitForStatus(client, holder!.id, 'running');
    const { runs: queued } = await client.stage({ command: ['true'], resources: 'gpu=2', repeat: 2, priority: 5 });
    const [first, second] = queued.map((run) => run.id) as [string, string];
    const bullPriority = String(1_000_001 - 5);

    await (await bull.getJob(second))!.changePriority({ priority: 1 });
    const kept = `Run ${second}: its priority was changed from BullMQ, but it is signed: kept at 5`;
    await waitFor('the worker to keep the signed priority', () => messages(s.logs).includes(kept));
    expect(await client.redis.hget(client.keys.run(second), 'priority')).toBe(bullPriority);
    expect(await client.redis.zscore(client.keys.queue.key('prioritized'), second)).toBe(await client.redis.hget(client.keys.run(second), 'score'));
    expect((await client.getRun(second)).priority).toBe(5);

    open(gate);
    for (const id of [first, second]) await waitForStatus(client, id, 'completed');
    expect(scheduled(s.logs)).toEqual([holder!.id, first, second]);
    await expectWhole(client);
    await expectAgreement(s, { cli: true });
  });

  it('updateData (job.updateData) of a running or ended run: fitq keeps what the run is; fitq runs shows what ran, and reconciling puts BullMQ\'s data back', async () => {
    const s = await setup();
    const { client, bull, queue } = s;
    const [done] = (await client.stage({ command: ['echo', 'hello'], resources: 'cpu=1' })).runs;
    await waitForStatus(client, done!.id, 'completed');
    const gate = join(s.dir, 'gate');
    const [running] = (await client.stage({ command: gated(gate), resources: 'cpu=1 gpu=1 lic=1' })).runs;
    await waitForStatus(client, running!.id, 'running');
    const original = new Map<string, unknown>();
    for (const id of [running!.id, done!.id]) {
      const job = (await bull.getJob(id))!;
      original.set(id, job.data);
      await job.updateData({ ...(job.data as Record<string, unknown>), command: ['rm', '-rf', '/tmp/nothing'], resources: '' });
    }
    await (await bull.getJob(running!.id))!.updateData({ foo: 1 });

    // fitq runs reads the runs as fitq staged them.
    const listed = await expectAgreement(s, { cli: true });
    expect(listed.find((run) => run.id === running!.id)).toMatchObject({
      status: 'running', command: gated(gate), requires: 'cpu=1 gpu=1 lic=1', startedAt: expect.any(Number) as unknown,
    });
    expect(listed.find((run) => run.id === done!.id)).toMatchObject({ status: 'completed', command: ['echo', 'hello'], requires: 'cpu=1' });
    const table = await fitq(['runs', '--columns', 'id,requires,command'], { queue });
    expect(table.stdout).toMatch(new RegExp(`^${done!.id} +cpu=1 +echo hello$`, 'm'));
    // job.updateData emits no event: a reconcile's full pass over every run puts BullMQ's data back.
    await client.redis.hset(client.keys.reconcile, 'pass', 'ids:');
    await client.reconcile();
    for (const id of [running!.id, done!.id]) expect((await bull.getJob(id))!.data, id).toEqual(original.get(id));

    open(gate);
    await waitForStatus(client, running!.id, 'completed');
    expect(await client.getRun(running!.id)).toMatchObject({ command: gated(gate), resources: { cpu: 1, gpu: 1, lic: 1 } });
    await expectWhole(client);
    await expectAgreement(s, { cli: true });
  });

  it('updateData of a staged run bypasses neither the fit index nor its signature: it runs as staged, and its worker says so', async () => {
    const s = await setup({ secret: true });
    const { client, bull } = s;
    const gate = join(s.dir, 'gate');
    const touched = join(s.dir, 'touched');
    const [holder] = (await client.stage({ command: gated(gate), resources: 'gpu=2' })).runs;
    await waitForStatus(client, holder!.id, 'running');
    const [staged] = (await client.stage({ command: ['echo', 'as staged'], resources: 'gpu=2 lic=1' })).runs;
    const job = (await bull.getJob(staged!.id))!;
    const data = job.data as Record<string, unknown>;
    // Smaller demands (it would fit beside the holder) and another command.
    await job.updateData({ ...data, command: ['touch', touched], resources: 'gpu=1' });
    const kept = `Run ${staged!.id}: its job data was changed from BullMQ (job.updateData): put back as fitq staged it (fitq update changes a staged run)`;
    await client.redis.hset(client.keys.reconcile, 'pass', 'ids:'); // the worker's next reconcile looks at every run
    await waitFor('the worker to put the data back', () => messages(s.logs).includes(kept));
    expect((await bull.getJob(staged!.id))!.data).toEqual(data);
    expect(await statusOf(client, staged!.id)).toBe('staged');

    open(gate);
    await waitForStatus(client, staged!.id, 'completed');
    expect(existsSync(touched)).toBe(false);
    expect((await client.readLog(staged!.id)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []))).toEqual(['as staged']);
    expect(await client.getRun(staged!.id)).toMatchObject({ status: 'completed', devices: [0, 1], resources: { gpu: 2, lic: 1 } });
    await expectWhole(client);
    await expectAgreement(s, { cli: true });
  });

  it('pause / resume (queue.pause, queue.resume) holds every run back, then lets them start', async () => {
    const s = await setup();
    const { client, bull } = s;
    await bull.pause();
    const [run] = (await client.stage({ command: ['true'], resources: 'gpu=1 lic=1' })).runs;
    await waitFor('the worker to see the pause', () => messages(s.logs).some((m) => m.startsWith('The queue is paused')));
    expect(await statusOf(client, run!.id)).toBe('staged');
    await bull.resume();
    await waitForStatus(client, run!.id, 'completed');
    await expectWhole(client);
    await expectAgreement(s, { cli: true });
  });

  it('clean (queue.clean) of completed, failed and prioritized runs: fitq forgets them; a running run is locked and kept', async () => {
    const s = await setup();
    const { client, bull } = s;
    const [ok] = (await client.stage({ command: ['echo', 'ok'] })).runs;
    const [bad] = (await client.stage({ command: ['sh', '-c', 'echo bad; exit 2'] })).runs;
    await waitForStatus(client, ok!.id, 'completed');
    await waitForStatus(client, bad!.id, 'failed');
    const gate = join(s.dir, 'gate');
    const [holder] = (await client.stage({ command: gated(gate), resources: 'gpu=2 lic=1' })).runs;
    await waitForStatus(client, holder!.id, 'running');
    const [waiting] = (await client.stage({ command: ['true'], resources: 'gpu=1 lic=1' })).runs;

    expect((await bull.clean(0, 100, 'completed')).sort()).toEqual([ok!.id]);
    expect(await bull.clean(0, 100, 'failed')).toEqual([bad!.id]);
    expect(await bull.clean(0, 100, 'prioritized')).toEqual([waiting!.id]);
    expect(await bull.clean(0, 100, 'active')).toEqual([]); // locked by its worker
    const [next] = (await client.stage({ command: ['true'], resources: 'gpu=1 lic=1' })).runs;

    let runs = await expectAgreement(s);
    expect(runs.map((run) => [run.id, run.status])).toEqual([[holder!.id, 'running'], [next!.id, 'staged']]);
    expect(await client.redis.exists(...[ok, bad].flatMap((run) => [client.keys.runLog(run!.id), client.keys.runPackedLog(run!.id)]))).toBe(0);
    open(gate);
    await waitForStatus(client, next!.id, 'completed');
    expect(scheduled(s.logs)).not.toContain(waiting!.id);
    await expectWhole(client);
    runs = await expectAgreement(s, { cli: true });
    expect(runs.map((run) => [run.id, run.status])).toEqual([[holder!.id, 'completed'], [next!.id, 'completed']]);
  });

  it('clean (queue.clean) of an active run whose lock lapsed with its dead worker: the reaper gives its pool share back', async () => {
    // No live worker reaps here: the test does, after the clean.
    const s = await setup({ worker: false });
    const { client, bull } = s;
    // A worker that claims and then dies: its lease and its run's lock lapse together.
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker({ name: 'dead', token: 'tok', leaseMs: 300, concurrency: 0, host: 'h', pid: 1, resources: 'slot=1' })).toBe(true);
    const [run] = (await client.stage({ command: ['true'], resources: 'slot=1 lic=2' })).runs;
    expect(await scripts.claimRun('dead', 'tok', 0)).toMatchObject({ code: 'claimed', runId: run!.id });
    expect(await client.redis.hget(client.keys.poolUsed, 'lic')).toBe('2');
    await waitFor('the lock to lapse', async () => (await client.redis.exists(client.keys.queue.key(`${run!.id}:lock`))) === 0);

    expect(await bull.clean(0, 100, 'active')).toEqual([run!.id]);
    expect(await client.redis.hget(client.keys.poolUsed, 'lic')).toBe('2');
    expect((await scripts.reapWorkers()).reaped).toEqual(['dead']);
    expect(await client.redis.exists(client.keys.worker('dead').info, client.keys.worker('dead').reserved)).toBe(0);
    expect(await client.redis.hget(client.keys.poolUsed, 'lic')).toBe('0');
    expect(await expectAgreement(s, { cli: true })).toEqual([]);
  });

  it('drain (queue.drain) removes the staged runs: never claimed afterwards, fitq forgets them', async () => {
    const s = await setup();
    const { client, bull } = s;
    const gate = join(s.dir, 'gate');
    const [holder] = (await client.stage({ command: gated(gate), resources: 'gpu=2' })).runs;
    await waitForStatus(client, holder!.id, 'running');
    const { runs: drained } = await client.stage({ command: ['true'], resources: 'gpu=1 lic=1', repeat: 3 });
    await bull.drain();
    const [next] = (await client.stage({ command: ['true'], resources: 'gpu=1 lic=1' })).runs;
    open(gate);
    await waitForStatus(client, next!.id, 'completed');
    for (const run of drained) expect(scheduled(s.logs)).not.toContain(run.id);
    await expectWhole(client);
    const runs = await expectAgreement(s, { cli: true });
    expect(runs.map((run) => run.id)).toEqual([holder!.id, next!.id]);
  });

  it('drain: a claim that drops the drained runs from the fit index before fitq reconciles still leaves fitq to forget them', async () => {
    // No worker polls here, so nothing reconciles between the drain and the claim.
    const s = await setup({ worker: false });
    const { client, bull } = s;
    const scripts = new Scripts(client.redis, client.keys, 100);
    expect(await scripts.registerWorker({ name: 'solo', token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources: 'gpu=1' })).toBe(true);
    const { runs: drained } = await client.stage({ command: ['true'], resources: 'gpu=1', repeat: 3 });
    // Reconciled once, as a worker's poll does: fitq has read the queue's events so far.
    await client.reconcile();
    await bull.drain();
    const [next] = (await client.stage({ command: ['true'], resources: 'gpu=1' })).runs;
    // The claim meets the drained runs first in their shape: it drops them and starts the next.
    expect(await scripts.claimRun('solo', 'tok', 0)).toMatchObject({ code: 'claimed', runId: next!.id });
    const runs = await expectAgreement(s, { cli: true });
    expect(runs.map((run) => run.id)).toEqual([next!.id]);
    for (const run of drained) expect(await client.redis.zscore(client.keys.ids, run.id), run.id).toBeNull();
    expect(await scripts.deregisterWorker('solo', 'tok')).toBeTruthy();
  });

  it('obliterate (queue.obliterate, force) deletes running runs too: their worker stops them and gives everything back', async () => {
    const s = await setup();
    const { client, bull } = s;
    const gate = join(s.dir, 'gate'); // never opened
    const [running] = (await client.stage({ command: gated(gate), resources: 'cpu=1 gpu=1 lic=1' })).runs;
    const [shared] = (await client.stage({ command: gated(gate), resources: 'gpu=0.5 lic=1' })).runs;
    await waitForStatus(client, running!.id, 'running');
    await waitForStatus(client, shared!.id, 'running');
    const [staged] = (await client.stage({ command: ['true'], resources: 'gpu=2' })).runs;
    const [done] = (await client.stage({ command: ['true'], resources: 'cpu=1' })).runs;
    await waitForStatus(client, done!.id, 'completed');

    await bull.pause();
    await bull.obliterate({ force: true });
    await expectWhole(client);
    await waitFor('the worker to run nothing', () => messages(s.logs).filter((m) => /^Run \S+ was killed by signal/.test(m)).length === 2);
    const runs = await expectAgreement(s);
    expect(runs).toEqual([]);
    expect(await client.redis.exists(...[running, shared, staged, done].flatMap((run) => [client.keys.runLog(run!.id), client.keys.runPackedLog(run!.id)]))).toBe(0);
    // The namespace works on: a new run starts and ends, with the same demands.
    const [again] = (await client.stage({ command: ['true'], resources: 'cpu=1 gpu=2 lic=2' })).runs;
    await waitForStatus(client, again!.id, 'completed');
    await expectWhole(client);
    await expectAgreement(s, { cli: true });
  });

  it('reconciling does a bounded amount per call, says when it is done, and leaves an emptied namespace without a key', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const scripts = new Scripts(client.redis, client.keys, 100);
    const namespaceKeys = async () => (await client.redis.keys(`${client.keys.base}*`)).sort(); // a test server: KEYS is fine
    expect(await scripts.reconcileRuns(100)).toEqual({ more: false, actions: [] });
    expect(await namespaceKeys()).toEqual([]);

    await client.stage({ command: ['true'], resources: 'nowhere=1', repeat: 250 });
    /** Reconcile calls until one says it is done: how many, and what they did. */
    const calls = async () => {
      const done: ReconcileAction[] = [];
      for (let count = 1; count <= 50; count++) {
        const { more, actions } = await scripts.reconcileRuns(100);
        done.push(...actions);
        if (!more) return { count, actions: done };
      }
      throw new Error('reconciling never said it was done');
    };
    // 250 added events (and 250 waiting events, skipped): a few calls of about 100.
    expect((await calls()).count).toBeGreaterThan(2);
    expect(await calls()).toEqual({ count: 1, actions: [] });

    const { hostname, port } = new URL(redisUrl());
    const bull = new Queue(client.keys.queue.name, { prefix: client.keys.queue.prefix, connection: { host: hostname, port: Number(port) } });
    opened.push(bull);
    await bull.drain();
    const { count, actions } = await calls();
    expect(count).toBeGreaterThan(2);
    expect(actions).toHaveLength(250);
    expect(new Set(actions.map((action) => action.kind))).toEqual(new Set(['forgotten']));
    expect(await namespaceKeys()).toEqual([]);
  });

  it('a job added by plain BullMQ (queue.add) is rejected with a reason and never runs, signed runs or not', async () => {
    const s = await setup({ secret: true });
    const { client, bull } = s;
    const touched = join(s.dir, 'touched');
    const plain = await bull.add('x', { any: 'data' });
    const runLike = await bull.add('y', { command: ['touch', touched], shell: false, cwd: '/', env: {}, labels: {}, resources: '', priority: 0 }, { priority: 5 });
    await waitFor('both jobs to be rejected', async () =>
      (await bull.getJobState(plain.id!)) === 'failed' && (await bull.getJobState(runLike.id!)) === 'failed');
    for (const job of [plain, runLike]) expect((await bull.getJob(job.id!))!.failedReason).toBe(NOT_A_RUN);
    const [run] = (await client.stage({ command: ['true'], resources: 'gpu=1' })).runs;
    await waitForStatus(client, run!.id, 'completed');
    expect(existsSync(touched)).toBe(false);
    expect(scheduled(s.logs)).toEqual([run!.id]);
    await waitFor('the worker to say why', () => messages(s.logs).includes(`Job ${plain.id} is not a fitq run (added without fitq's run data): rejected`));

    // Retrying it from BullMQ refuses it again.
    await (await bull.getJob(runLike.id!))!.retry('failed');
    await waitFor('the retried job to be rejected again', async () => (await bull.getJobState(runLike.id!)) === 'failed');
    expect(existsSync(touched)).toBe(false);
    await expectWhole(client);
    const runs = await expectAgreement(s, { cli: true });
    expect(runs.filter((r) => r.status === 'rejected').map((r) => r.reason)).toEqual([NOT_A_RUN.slice(10), NOT_A_RUN.slice(10)]);
  });

  it('jobs added by plain BullMQ and rejected count against history retention like any ended run', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const bull = new Queue(client.keys.queue.name, { prefix: client.keys.queue.prefix, connection: { url: redisUrl() } });
    try {
      await client.setRetention({ keepFailed: 2 });
      for (let i = 0; i < 5; i++) await bull.add('plain', { i });
      await client.reconcile();
      expect(await bull.getJobCounts('failed', 'prioritized', 'wait')).toEqual({ failed: 2, prioritized: 0, wait: 0 });
      expect((await client.listRuns()).map((run) => run.status)).toEqual(['rejected', 'rejected']);
    } finally {
      await bull.close();
    }
  });
});
