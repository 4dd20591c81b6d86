/**
 * A namespace that becomes empty (no runs, no workers, no pools) leaves no key
 * behind, whichever goes last; while anything is left, the staging counter
 * stays, so no order position is handed out twice.
 */
import { describe, expect, it } from 'vitest';
import type { FitqClient } from '../../src/client.js';
import { connectClient, fitq, newQueue, startTestWorker } from '../support/fitq.js';

async function namespaceKeys(client: FitqClient): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.redis.scan(cursor, 'MATCH', `${client.keys.base}*`, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys.sort();
}

describe('an emptied namespace', () => {
  it('has no key left once its runs, workers and pools are gone (runs rm last)', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    expect((await fitq(['pool', 'set', 'license=1'], { queue })).exitCode).toBe(0);
    const first = await fitq(['stage', '-r', 'foo=1 license=1', '--', 'echo', 'one'], { queue });
    const second = await fitq(['stage', '-r', 'foo=1', '--', 'sh', '-c', 'exit 3'], { queue });
    const worker = await fitq(['worker', '-r', 'foo=1', '--name', 'once', '--run-once'], { queue });
    expect(worker.exitCode, worker.stderr).toBe(0);
    expect((await fitq(['pool', 'rm', 'license'], { queue })).exitCode).toBe(0);

    // One run left: the counter stays, and the next run comes after it.
    expect((await fitq(['runs', 'rm', first.stdout.trim()], { queue })).exitCode).toBe(0);
    expect(await namespaceKeys(client)).toContain(client.keys.seq);
    const third = (await client.stage({ command: ['true'] })).runs[0]!;
    expect(third.seq).toBe(3);

    // The failed run and the one just staged are all that is left.
    expect((await client.listRuns()).map((run) => [run.id, run.status])).toEqual([
      [second.stdout.trim(), 'failed'],
      [third.id, 'staged'],
    ]);
    const removed = await fitq(['runs', 'rm', '--status', 'failed', '--status', 'staged'], { queue });
    expect(removed).toMatchObject({ exitCode: 0, stdout: 'Removed 2 runs.' });
    expect(await namespaceKeys(client)).toEqual([]);

    // Nothing is in use any more: numbering starts again.
    expect((await client.stage({ command: ['true'] })).runs[0]!.seq).toBe(1);
  });

  it('keeps its counter while a worker is registered, and drops it when that worker stops last', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const { worker } = await startTestWorker(queue, { name: 'last' });
    const { runs } = await client.stage({ command: ['true'] });
    await client.waitForEnd(runs[0]!.id);
    await client.removeRuns([runs[0]!.id]);
    expect(await namespaceKeys(client)).toContain(client.keys.seq);

    await worker.stop();
    expect(await namespaceKeys(client)).toEqual([]);
  });

  it('drops its counter when its last pool goes after its runs', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    await client.setPool('license=2');
    const { runs } = await client.stage({ command: ['true'] });
    await client.removeRuns([runs[0]!.id]);
    // The queue's event stream stays while the namespace does.
    expect(await namespaceKeys(client)).toEqual([client.keys.poolCapacity, client.keys.queue.key('events'), client.keys.seq].sort());

    await client.removePool(['license']);
    expect(await namespaceKeys(client)).toEqual([]);
  });
});

describe('a notification URL', () => {
  it('keeps a namespace with nothing else; fitq notify rm leaves no key behind', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    expect(await client.setNotifyUrl('http://127.0.0.1:9/hook')).toBe(true);
    expect(await namespaceKeys(client)).toEqual([client.keys.settings]);
    expect(await client.getNotifyUrl()).toBe('http://127.0.0.1:9/hook');
    expect(await client.setNotifyUrl(null)).toBe(true);
    expect(await namespaceKeys(client)).toEqual([]);
    expect(await client.setNotifyUrl(null)).toBe(false);
  });
});
