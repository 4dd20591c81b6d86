/**
 * BullMQ's public API on runs staged with the fitq CLI and run by real fitq
 * workers: job counts and states agree with `fitq runs`, a job's data is the
 * run, `job.waitUntilFinished` settles with the run's end, and a QueueEvents
 * listener hears BullMQ's events for every run and fitq's own (`canceled`,
 * `lost`, `restaged`, `rejected`).
 */
import type { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue, startTestWorker } from '../support/fitq.js';
import { FITQ_JOB_STATES, fitqRunsByState, openRunQueue, recordEvents, stage, type RunsByState } from '../support/bullmq.js';

/** BullMQ's counts and job ids per state, against what `fitq runs --json` says. */
async function expectBullmqAgrees(bull: Queue, runs: RunsByState): Promise<void> {
  expect(await bull.getJobCounts()).toEqual({
    prioritized: runs.ids.prioritized.length,
    active: runs.ids.active.length,
    completed: runs.ids.completed.length,
    failed: runs.ids.failed.length,
    waiting: 0,
    delayed: 0,
    'waiting-children': 0,
  });
  for (const state of FITQ_JOB_STATES) {
    const jobs = await bull.getJobs([state]);
    expect(jobs.map((job) => job.id).sort(), `jobs ${state}`).toEqual(runs.ids[state]);
  }
}

describe("BullMQ's API on fitq runs", () => {
  it('getJobCounts() and getJobs() agree with fitq runs --json: staged = prioritized, running = active, failed = failed + canceled + rejected', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const bull = openRunQueue(client);
    const events = await recordEvents(client);

    const [[ok, bad, sleeper], [waiting, canceled], [unsigned]] = await Promise.all([
      stage(queue, ['-r', 'slot=1', '--from-file', '-'], 'true\nexit 3\nsleep 600\n'),
      stage(queue, ['-r', 'huge=1', '--repeat', '2', '--', 'true']),
      stage(queue, ['-r', 'signed=1', '--', 'true']),
    ]);
    expect((await fitq(['cancel', canceled!], { queue })).stdout.trim()).toBe(`Run ${canceled} canceled`);

    await startTestWorker(queue, { name: 'w', resources: 'slot=3' });
    await startTestWorker(queue, { name: 'strict', resources: 'signed=1', secret: 'fitq-api-test-secret' });
    await events.next('completed', ok!);
    await events.next('failed', bad!);
    await events.next('active', sleeper!);
    await events.next('rejected', unsigned!);

    const runs = await fitqRunsByState(queue);
    expect(runs.statuses).toEqual({ staged: 1, running: 1, completed: 1, failed: 1, canceled: 1, rejected: 1 });
    expect(runs.ids).toEqual({
      prioritized: [waiting],
      active: [sleeper],
      completed: [ok],
      failed: [bad!, canceled!, unsigned!].sort(),
    });
    await expectBullmqAgrees(bull, runs);
    // Each failed job's reason starts with the run's status.
    const reasons = await Promise.all([bad, canceled, unsigned].map(async (id) => (await bull.getJob(id!))?.failedReason));
    expect(reasons).toEqual(['failed: exit code 3', 'canceled: canceled while staged', expect.stringMatching(/^rejected: /)]);
  });

  it("Queue.getWorkers() lists fitq's live workers, one entry each, as BullMQ lists its own", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const bull = openRunQueue(client);
    const { worker: first } = await startTestWorker(queue, { name: 'wa' });
    await startTestWorker(queue, { name: 'wb' });
    const names = async () => (await bull.getWorkers()).map((entry) => entry.rawname).sort();
    expect(await names()).toEqual([client.keys.queue.workerClientName('wa'), client.keys.queue.workerClientName('wb')]);
    expect(await bull.getWorkersCount()).toBe(2);
    await first.stop();
    await expect.poll(names, { timeout: 10_000 }).toEqual([client.keys.queue.workerClientName('wb')]);
  });

  it('a job is its run (id, data), and job.waitUntilFinished(queueEvents) resolves with the exit code or rejects with the failed reason', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const bull = openRunQueue(client);
    const { queueEvents } = await recordEvents(client);

    const [ok] = await stage(queue, ['-r', 'slot=1', 'mem=1G', '--label', 'sweep=a', 'lr=0.1', '--', 'true']);
    const [bad] = await stage(queue, ['-r', 'slot=1', '--label', 'sweep=b', '--', 'sh', '-c', 'exit 3']);

    const okJob = (await bull.getJob(ok!))!;
    const badJob = (await bull.getJob(bad!))!;
    expect({ id: okJob.id, name: okJob.name, timestamp: okJob.timestamp }).toEqual({ id: ok, name: 'run', timestamp: (await client.getRun(ok!)).stagedAt });
    expect(okJob.data).toMatchObject({
      command: ['true'],
      resources: 'mem=1000000000 slot=1',
      requires: 'slot=1 mem=1G',
      labels: { sweep: 'a', lr: '0.1' },
    });
    // A field at its default (no shell, priority 0) is left out of the data.
    expect(okJob.data).not.toHaveProperty('shell');
    expect(okJob.data).not.toHaveProperty('priority');
    expect(badJob.data).toMatchObject({ command: ['sh', '-c', 'exit 3'], resources: 'slot=1', labels: { sweep: 'b' } });
    expect(await okJob.getState()).toBe('prioritized');

    // Waiting before any worker exists: the settling comes from the events.
    const finished = okJob.waitUntilFinished(queueEvents, 20_000);
    const failing = badJob.waitUntilFinished(queueEvents, 20_000);
    await startTestWorker(queue, { name: 'w', resources: 'slot=1 mem=2G' });
    await expect(finished).resolves.toBe(0);
    await expect(failing).rejects.toThrow(/^failed: exit code 3$/);

    const [okDone, badDone] = [(await bull.getJob(ok!))!, (await bull.getJob(bad!))!];
    expect([await okDone.getState(), okDone.returnvalue, await badDone.getState(), badDone.failedReason]).toEqual([
      'completed', 0, 'failed', 'failed: exit code 3',
    ]);
    const ended = await client.getRun(ok!);
    expect([okDone.processedOn, okDone.finishedOn]).toEqual([ended.startedAt, ended.endedAt]);
  });

  it("a QueueEvents listener hears waiting, active, completed and failed, and fitq's canceled, restaged and lost", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const bull = openRunQueue(client);
    const events = await recordEvents(client);

    // CLI workers for the doomed run below (they take a moment to start), and
    // one in this process that fits ok and bad, never the doomed run, and reaps dead workers.
    const cliWorkers = new Map(['v1', 'v2'].map((name) => {
      return [name, spawnCliWorker(queue, ['-r', 'victim=1', '--name', name, '--lease', '2', '--kill-grace', '1'])];
    }));
    await startTestWorker(queue, { name: 'reaper', resources: 'slot=1', leaseMs: 2000 });

    const [[ok, bad], [staged], [doomed]] = await Promise.all([
      stage(queue, ['-r', 'slot=1', '--from-file', '-'], 'true\nexit 3\n'),
      stage(queue, ['-r', 'huge=1', '--', 'true']),
      // One retry, on CLI workers killed under it: re-staged the first time, lost the second.
      stage(queue, ['-r', 'victim=1', '--retries', '1', '--', 'sleep', '30']),
    ]);
    // Canceled while the rest goes on.
    const canceling = fitq(['cancel', staged!], { queue });
    expect((await events.next('added', ok!)).args).toEqual({ name: 'run' });
    expect((await events.next('waiting', ok!)).args).toEqual({});
    expect((await events.next('completed', ok!)).args).toEqual({ returnvalue: 0, prev: 'active' });
    expect((await events.next('failed', bad!)).args).toEqual({ failedReason: 'failed: exit code 3', prev: 'active' });

    const killItsWorker = async (epoch: number): Promise<string> => {
      await events.next('active', doomed!, epoch);
      const { worker: name } = await client.getRun(doomed!);
      const worker = cliWorkers.get(name!)!;
      await worker.waitForMessage(`Run ${doomed} started`);
      worker.process.kill('SIGKILL');
      return name!;
    };
    const first = await killItsWorker(1);
    expect((await events.next('restaged', doomed!)).args).toEqual({ reason: `worker ${first} stopped renewing its lease` });
    expect((await events.next('waiting', doomed!, 2)).args).toEqual({ prev: 'active' });
    // The other worker takes it again at once.
    const second = await killItsWorker(2);
    expect(second).not.toBe(first);
    expect((await events.next('lost', doomed!)).args).toEqual({ reason: `worker ${second} stopped renewing its lease` });
    const failed = await events.next('failed', doomed!);
    expect(failed.args).toEqual({ failedReason: `lost: worker ${second} stopped renewing its lease`, prev: 'active' });

    expect((await canceling).stdout.trim()).toBe(`Run ${staged} canceled`);
    expect((await events.next('failed', staged!)).args).toEqual({ failedReason: 'canceled: canceled while staged', prev: 'waiting' });
    expect((await events.next('canceled', staged!)).args).toEqual({ reason: 'canceled while staged' });

    expect(events.of(ok!)).toEqual(['added', 'waiting', 'active', 'completed']);
    expect(events.of(bad!)).toEqual(['added', 'waiting', 'active', 'failed']);
    expect(events.of(staged!)).toEqual(['added', 'waiting', 'failed', 'canceled']);
    expect(events.of(doomed!)).toEqual(['added', 'waiting', 'active', 'restaged', 'waiting', 'active', 'failed', 'lost']);

    const runs = await fitqRunsByState(queue);
    expect(runs.statuses).toEqual({ completed: 1, failed: 1, canceled: 1, lost: 1 });
    await expectBullmqAgrees(bull, runs);
  });
});
