/**
 * fitq pause / resume, and BullMQ's own pause of the same queue: no run
 * starts while paused, staged runs say why, running runs go on.
 */
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { connectClient, fitq, messages, newQueue, redisUrl, startTestWorker } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

const PAUSED_LOG = 'The queue is paused (fitq pause): starting no run until fitq resume';

describe('pausing the queue', () => {
  it('fitq pause stops claims (staged runs say why), fitq resume starts them at once; BullMQ sees the same pause', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const bull = new Queue(client.keys.queue.name, { prefix: client.keys.queue.prefix, connection: { url: redisUrl() } });
    try {
      const paused = await fitq(['pause'], { queue });
      expect([paused.exitCode, paused.stdout.trim()]).toEqual([0, 'Paused: no run starts until fitq resume.']);
      expect((await fitq(['pause'], { queue })).stdout.trim()).toBe('The queue was already paused.');
      expect(await bull.isPaused()).toBe(true);

      const id = (await fitq(['stage', '-r', 'slot=1', '--', 'true'], { queue })).stdout.trim();
      const { logs } = await startTestWorker(queue, { name: 'pw', resources: 'slot=1' });
      await waitFor('the worker to find the queue paused', () => messages(logs).includes(PAUSED_LOG));
      expect(await client.getRun(id)).toMatchObject({ status: 'staged', reason: 'the queue is paused (fitq resume)' });
      expect((await fitq(['runs'], { queue })).stdout).toMatch(/staged .* the queue is paused \(fitq resume\)$/m);

      const resumed = await fitq(['resume'], { queue });
      expect([resumed.exitCode, resumed.stdout.trim()]).toEqual([0, 'Resumed.']);
      expect(await client.waitForEnd(id)).toMatchObject({ status: 'completed', worker: 'pw' });
      expect(await bull.isPaused()).toBe(false);
      expect((await fitq(['resume'], { queue })).stdout.trim()).toBe('The queue was not paused.');

      // BullMQ's pause (Bull Board's button) pauses fitq's workers too.
      await bull.pause();
      const next = (await fitq(['stage', '-r', 'slot=1', '--', 'true'], { queue })).stdout.trim();
      expect(await client.getRun(next)).toMatchObject({ status: 'staged', reason: 'the queue is paused (fitq resume)' });
      await fitq(['resume'], { queue });
      expect(await client.waitForEnd(next)).toMatchObject({ status: 'completed' });
    } finally {
      await bull.close();
    }
  });
});
