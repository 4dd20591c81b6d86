/**
 * The times a run records (staged, started, ended: BullMQ's timestamp,
 * processedOn and finishedOn) come from the Redis server's clock, as leases
 * do: a worker and a stager whose clocks are an hour ahead record no run
 * started in the future. Only this process's Date is faked (vitest), so the
 * in-process worker and client run an hour ahead of Redis.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { serverTimeMs } from '../../src/model/liveness.js';
import { openRunQueue } from '../support/bullmq.js';
import { connectClient, newQueue, startTestWorker } from '../support/fitq.js';

const HOUR_MS = 3_600_000;

afterEach(() => {
  vi.useRealTimers();
});

it('a worker and a stager an hour ahead record staging, start and end by the Redis server clock', async () => {
  const queue = newQueue();
  const client = await connectClient(queue);
  const before = serverTimeMs(await client.redis.time());
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  vi.setSystemTime(Date.now() + HOUR_MS);

  const staged = await client.stage([
    { command: ['true'], resources: 'cpu=1' },
    { command: ['true'], resources: 'cpu=1 licence=1' },
  ]);
  const [ran, canceled] = staged.runs.map((run) => run.id) as [string, string];
  await client.cancelRun(canceled);
  await startTestWorker(queue, { resources: 'cpu=1' });
  const ended = await client.waitForEnd(ran);
  const after = serverTimeMs(await client.redis.time());
  expect(Date.now() - after, 'this process runs an hour ahead').toBeGreaterThan(HOUR_MS - 60_000);

  const job = await openRunQueue(client).getJob(ran);
  const recorded = {
    stagedAsReturned: staged.runs[0]!.stagedAt,
    stagedAt: ended.stagedAt,
    startedAt: ended.startedAt,
    endedAt: ended.endedAt,
    timestamp: job?.timestamp,
    processedOn: job?.processedOn,
    finishedOn: job?.finishedOn,
    canceledAt: (await client.getRun(canceled)).endedAt,
  };
  const within = Object.fromEntries(Object.keys(recorded).map((name) => [name, 'within']));
  const judged = Object.fromEntries(
    Object.entries(recorded).map(([name, at]) => [name, at !== undefined && at >= before && at <= after ? 'within' : `${at} not in [${before}, ${after}]`]),
  );
  expect(ended.status).toBe('completed');
  expect(judged).toEqual(within);
  expect(ended.startedAt! - ended.stagedAt).toBeGreaterThanOrEqual(0);
  expect(ended.endedAt! - ended.startedAt!).toBeGreaterThanOrEqual(0);
});
