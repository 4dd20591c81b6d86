/**
 * Backfill by time limit (includes/policy/backfillsByTime.lua, shadowTime.lua): a
 * later run may take what a blocked head holds only when its time limit
 * ends before the head could start anyway (the head's shadow time, from the
 * deadlines of the runs its worker runs); never while a running run has no
 * limit. And a worker's --max-time-limit and --default-time-limit, as the
 * claim applies them. Scripts driven directly, as a worker's claims would.
 */
import { describe, expect, it } from 'vitest';
import { FitqClient } from '../../src/client.js';
import { Scripts } from '../../src/queue/scripts.js';
import type { ClaimLimits, ClaimPolicy } from '../../src/queue/claim-reply.js';
import type { WorkerRegistration } from '../../src/queue/worker-calls.js';
import { whyWaiting } from '../../src/model/why-waiting.js';
import { connectClient, newQueue } from '../support/fitq.js';

const registration = (resources: string, timeLimits: ClaimLimits, policy: ClaimPolicy): WorkerRegistration => ({
  name: 'w', token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources, timeLimits, policy,
});

async function setUp(
  resources: string,
  timeLimits: ClaimLimits = {},
  policy: ClaimPolicy = 'backfill',
): Promise<{ client: FitqClient; scripts: Scripts; claim: () => ReturnType<Scripts['claimRun']> }> {
  const client = await connectClient(newQueue());
  const scripts = new Scripts(client.redis, client.keys, 100);
  expect(await scripts.registerWorker(registration(resources, timeLimits, policy))).toBe(true);
  return { client, scripts, claim: () => scripts.claimRun('w', 'tok', 0, policy, 'pack', timeLimits) };
}

async function stage(client: FitqClient, resources: string, timeLimit?: string): Promise<string> {
  return (await client.stage({ command: ['true'], resources, ...(timeLimit ? { timeLimit } : {}) })).runs[0]!.id;
}

async function reason(scripts: Scripts, runId: string): Promise<string> {
  const [verdict] = await scripts.explainRuns([runId]);
  return whyWaiting(verdict!).reason;
}

describe('backfill by time limit', () => {
  it('starts a later run in what the head holds only when its limit ends before the head can start', async () => {
    const { client, scripts, claim } = await setUp('cpu=2');
    const running = await stage(client, 'cpu=1', '100s');
    expect(await claim()).toMatchObject({ code: 'claimed', runId: running });
    const head = await stage(client, 'cpu=2');
    const long = await stage(client, 'cpu=1', '200s');
    const short = await stage(client, 'cpu=1', '50s');
    expect(await reason(scripts, short)).toBe(`waiting for a worker to claim it (backfills: ends before ${head} can start, in 1m40s)`);
    expect(await reason(scripts, long)).toBe(
      `held for older run ${head} on w: it needs cpu=2, 1 free (it can start in 1m40s, before this run's time limit of 3m20s would end)`,
    );
    // The head is held; the long run waits; the short one goes.
    expect(await claim()).toMatchObject({ code: 'claimed', runId: short });
    expect(await client.redis.hgetall(client.keys.holds)).toEqual({ [head]: 'w' });
    expect(await claim()).toEqual({ code: 'waiting', ignored: [], holding: head, preempting: [] });
    expect(await reason(scripts, long)).toBe('waiting for resources: cpu=1 > 0 free on w');
    // The run records its limit and deadline, from the claim's clock.
    const record = await client.getRun(short);
    expect(record).toMatchObject({ status: 'running', timeLimit: 50_000 });
    expect(record.deadline).toBe(record.startedAt! + 50_000);
  });

  it('never lets a later run take what the head holds while a running run has no limit', async () => {
    const { client, scripts, claim } = await setUp('cpu=2');
    const running = await stage(client, 'cpu=1');
    expect(await claim()).toMatchObject({ code: 'claimed', runId: running });
    const head = await stage(client, 'cpu=2');
    const short = await stage(client, 'cpu=1', '1s');
    expect(await claim()).toEqual({ code: 'waiting', ignored: [], holding: head, preempting: [] });
    expect(await reason(scripts, short)).toBe(
      `held for older run ${head} on w: it needs cpu=2, 1 free (when it can start is not known: a run on w has no time limit)`,
    );
    // Without limits anywhere, the reason is as it always was.
    const unlimited = await stage(client, 'cpu=1');
    expect(await reason(scripts, unlimited)).toBe(`held for older run ${head} on w: it needs cpu=2, 1 free`);
  });

  it('never backfills under --policy fifo', async () => {
    const { client, scripts, claim } = await setUp('cpu=2', {}, 'fifo');
    const running = await stage(client, 'cpu=1', '100s');
    expect(await claim()).toMatchObject({ code: 'claimed', runId: running });
    const head = await stage(client, 'cpu=2');
    const short = await stage(client, 'cpu=1', '1s');
    expect(await claim()).toMatchObject({ code: 'waiting' });
    expect(await client.redis.hgetall(client.keys.holds)).toEqual({});
    expect((await client.getRun(short)).status).toBe('staged');
    expect(await reason(scripts, short)).toBe(`behind older run ${head} on w (policy fifo)`);
  });

  it('judges by the deadlines of every running run: the head starts once enough of them have ended', async () => {
    const { client, claim } = await setUp('cpu=3');
    const a = await stage(client, 'cpu=1', '30s');
    const b = await stage(client, 'cpu=1', '300s');
    expect(await claim()).toMatchObject({ code: 'claimed', runId: a });
    expect(await claim()).toMatchObject({ code: 'claimed', runId: b });
    // The head needs 2 of 3: 1 is free, a's ends in 30s: the shadow is a's deadline, not b's.
    const head = await stage(client, 'cpu=2');
    const fits = await stage(client, 'cpu=1', '20s');
    const tooLong = await stage(client, 'cpu=1', '60s');
    expect(await claim()).toMatchObject({ code: 'claimed', runId: fits });
    expect(await claim()).toEqual({ code: 'waiting', ignored: [], holding: head, preempting: [] });
    expect((await client.getRun(tooLong)).status).toBe('staged');
  });
});

describe("a worker's time limits", () => {
  it('never claims a run whose limit is above its maximum, and gives a run without one the default, else the maximum', async () => {
    const { client, scripts, claim } = await setUp('cpu=4', { maxMs: 100_000 });
    const over = await stage(client, 'cpu=1', '200s');
    const within = await stage(client, 'cpu=1', '100s');
    const none = await stage(client, 'cpu=1');
    expect(await reason(scripts, over)).toBe("its time limit of 3m20s is above every live worker's --max-time-limit (the longest is 1m40s)");
    expect(await claim()).toMatchObject({ code: 'claimed', runId: within });
    expect(await claim()).toMatchObject({ code: 'claimed', runId: none });
    expect(await claim()).toMatchObject({ code: 'idle' });
    expect(await client.getRun(none)).toMatchObject({ status: 'running', timeLimit: 100_000 });
    expect((await client.getRun(over)).status).toBe('staged');

    const other = await setUp('cpu=1', { defaultMs: 10_000, maxMs: 100_000 });
    const unlimited = await stage(other.client, 'cpu=1');
    expect((await other.client.getRun(unlimited)).timeLimit).toBeUndefined();
    expect(await other.claim()).toMatchObject({ code: 'claimed', runId: unlimited });
    expect(await other.client.getRun(unlimited)).toMatchObject({ status: 'running', timeLimit: 10_000 });
  });

  it('lets runs staged without a limit backfill by the default limit the worker gives them', async () => {
    const { client, claim } = await setUp('cpu=2', { defaultMs: 60_000 });
    const running = await stage(client, 'cpu=1', '300s');
    expect(await claim()).toMatchObject({ code: 'claimed', runId: running });
    const head = await stage(client, 'cpu=2');
    const later = await stage(client, 'cpu=1');
    expect(await claim()).toMatchObject({ code: 'claimed', runId: later });
    expect(await client.redis.hgetall(client.keys.holds)).toEqual({ [head]: 'w' });
  });
});
