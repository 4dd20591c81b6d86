/**
 * Notifications in flight are bounded: a worker (in this process, with small
 * bounds) and a real HTTP receiver that never answers. At most `concurrent`
 * POSTs are open at once, at most `backlog` notifications are held (sending,
 * waiting or waiting to try again); beyond that they are dropped, logged
 * once and counted, and the outbox is left in Redis until there is room.
 * Runs end and are claimed as ever meanwhile.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { DEFAULT_NOTIFY_BOUNDS } from '../../src/worker/notify-bounds.js';
import { Notifier } from '../../src/worker/notifier.js';
import { connectClient, messages, newQueue, startTestWorker } from '../support/fitq.js';
import { startReceiver } from '../support/http-receiver.js';
import { waitFor } from '../support/wait.js';

/** Small bounds, and tries that never time out within a test: nothing held is let go until the worker stops. */
const notifyBounds = { concurrent: 2, backlog: 5, tryTimeoutMs: 120_000 };

describe('notification bounds', () => {
  it('a receiver that never answers holds at most `concurrent` connections; notifications beyond the backlog are dropped, logged once and counted', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const receiver = await startReceiver(() => undefined);
    await client.setNotifyUrl(`${receiver.url}/hook`);
    const { worker, logs } = await startTestWorker(queue, { resources: 'cpu=1', notifyBounds });
    const ids = (await client.stage(Array.from({ length: 20 }, () => ({ command: ['true'] })))).runs.map((run) => run.id);
    // Claims and run ends go on while the receiver holds the first POSTs open.
    expect((await client.waitForRuns(ids)).every((run) => run.status === 'completed')).toBe(true);
    await waitFor('two POSTs', () => receiver.received.length === 2);
    await worker.stop();
    expect(receiver.received).toHaveLength(2);
    expect(receiver.mostOpen()).toBe(2);
    const notes = messages(logs).filter((message) => /notification/.test(message));
    expect(notes.filter((message) => message.startsWith('Dropped the notification of run '))).toEqual([
      expect.stringMatching(/: 5 notifications are already waiting to be sent \(is the receiver slow or down\?\); further ones are dropped and counted, not logged$/),
    ]);
    expect(notes).toContain('Dropped 15 notification(s) in all: 5 were already waiting to be sent');
    expect(notes).toContain('Gave up 5 notification(s) still on their way: the worker is stopping');
    await waitFor('the receiver’s connections to close', () => receiver.open() === 0);
  });

  it('takes from the outbox only what it has room for: the rest waits in Redis, nothing dropped', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const receiver = await startReceiver(() => undefined);
    await client.setNotifyUrl(receiver.url);
    // Canceled while staged (nothing could run them): their notifications wait in the outbox.
    const ids = (await client.stage(Array.from({ length: 12 }, () => ({ command: ['true'], resources: 'gpu=1' })))).runs.map((run) => run.id);
    await client.cancelRuns(ids);
    expect(await client.redis.llen(client.keys.notifyOutbox)).toBe(12);
    const { worker, logs } = await startTestWorker(queue, { resources: 'cpu=1', notifyBounds });
    await waitFor('two POSTs', () => receiver.received.length === 2);
    expect(await client.redis.llen(client.keys.notifyOutbox)).toBe(7);
    await worker.stop();
    expect(await client.redis.llen(client.keys.notifyOutbox)).toBe(7);
    expect(messages(logs).filter((message) => message.startsWith('Dropped'))).toEqual([]);
    expect(receiver.mostOpen()).toBe(2);
  });

  it("a run that ends while the outbox is being read is notified, not dropped as if the backlog were full (the read kept the backlog's room)", async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const receiver = await startReceiver(() => 200);
    const logs: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info', base: undefined }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
    const notifier = new Notifier({ redis: client.redis, keys: client.keys, queue, logger, targets: { kind: 'any' }, bounds: DEFAULT_NOTIFY_BOUNDS });
    const ids = (await client.stage([{ command: ['true'], resources: 'gpu=1', notify: `${receiver.url}/outbox` }, { command: ['true'] }])).runs.map((run) => run.id);
    await client.cancelRun(ids[0]!);
    // The outbox read is on its way (it waits for Redis) when the worker's own run ends.
    const reading = notifier.drainOutbox();
    notifier.runEnded(ids[1]!, 'completed', `${receiver.url}/own`);
    await reading;
    await waitFor('both notifications', () => receiver.received.length === 2);
    await notifier.close();
    expect(receiver.received.map((post) => post.path).sort()).toEqual(['/outbox', '/own']);
    expect(messages(logs).filter((message) => message.startsWith('Dropped'))).toEqual([]);
  });
});
