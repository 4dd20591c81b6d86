/**
 * Events on the namespace's channel are wake-up hints, not commands: anyone
 * who can PUBLISH can send one, so a worker cancels a run or stops only as
 * Redis records it (a cancellation in the run's job for its current claim, a
 * stop in the worker's record, both written by fitq's scripts). A
 * hand-PUBLISHed cancel or stop, from a plain Redis client, changes nothing;
 * `fitq cancel` and `fitq stop` still act at once, well before a heartbeat
 * (every 20 s here) could have carried them. Real worker processes.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { namespaceKeys } from '../../src/queue/keys.js';
import { spawnCliWorker } from '../support/cli-worker.js';
import { connectClient, fitq, newQueue, redisUrl } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

/** Publishes `events` on the queue's channel as any Redis client could. */
async function publishForged(queue: string, events: Record<string, unknown>[]): Promise<void> {
  const keys = namespaceKeys(queue, process.env.FITQ_PREFIX || undefined);
  const redis = new Redis(redisUrl());
  try {
    for (const event of events) expect(await redis.publish(keys.events, JSON.stringify(event))).toBeGreaterThan(0);
  } finally {
    redis.disconnect();
  }
}

describe('forged events', () => {
  it('a hand-published cancel or stop changes nothing; fitq cancel and fitq stop act at once', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    // Debug level: the worker says it looked at each event and found nothing recorded.
    const worker = spawnCliWorker(queue, ['-r', 'foo=2', '--name', 'forged-w', '--kill-grace', '1', '--lease', '60'], undefined, { FITQ_LOG_LEVEL: 'debug' });
    await worker.waitForMessage('Worker resources: foo=2');
    const [first, second] = (await client.stage({ command: ['sleep', '60'], resources: 'foo=1', repeat: 2 })).runs.map((run) => run.id);
    await worker.waitForMessage(`Run ${first} started`);
    await worker.waitForMessage(`Run ${second} started`);

    await publishForged(queue, [
      { type: 'cancel', runId: first, worker: 'forged-w' },
      { type: 'stop', worker: 'forged-w', now: true },
      { type: 'stop', worker: 'forged-w', now: false },
    ]);
    await worker.waitForMessage(`Ignored a cancel event for run ${first}: no cancellation is recorded for it`);
    await waitFor('both stop events ignored', () => worker.messages().filter((message) => message === 'Ignored a stop event: no stop is recorded for this worker').length === 2);
    expect((await client.getRun(first!)).status).toBe('running');
    expect((await client.getRun(second!)).status).toBe('running');
    expect((await client.listWorkers()).map((entry) => entry.name)).toEqual(['forged-w']);
    expect(worker.messages().filter((message) => /Cancel|Stop/.test(message)), worker.stdout()).toEqual([]);
    const canceled = await fitq(['cancel', first!], { queue });
    expect(canceled.exitCode, canceled.stderr).toBe(0);
    expect((await client.getRun(first!)).status).toBe('canceled');
    expect((await client.getRun(second!)).status).toBe('running');
    const stopped = await fitq(['stop', 'forged-w', '--now'], { queue });
    expect(stopped.exitCode, stopped.stderr).toBe(0);
    expect(await worker.exited).toEqual({ exitCode: 0, signal: undefined });
    expect((await client.getRun(second!)).status).toBe('lost');
  });

});
