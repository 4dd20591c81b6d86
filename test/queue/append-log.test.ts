/**
 * Output is stored only while its run is held by the claim that produced it.
 */
import { describe, expect, it } from 'vitest';
import { Scripts } from '../../src/queue/scripts.js';
import { connectClient, newQueue } from '../support/fitq.js';

describe('appendLog', () => {
  it('writes lines of a running run for its claim only', async () => {
    const client = await connectClient(newQueue());
    const scripts = new Scripts(client.redis, client.keys, 100);
    const { runs } = await client.stage({ command: ['true'], resources: 'x=1' });
    const id = runs[0]!.id;
    const line = [{ stream: 'stdout' as const, line: 'hello' }];

    expect(await scripts.appendLog(id, 'w', '1', line)).toBe(0); // still staged
    const registration = { name: 'w', token: 'tok', leaseMs: 60_000, concurrency: 0, host: 'h', pid: 1, resources: 'x=1', executorQueue: '' };
    expect(await scripts.registerWorker(registration)).toBe(true);
    const claim = await scripts.claimRun('w', 'tok', Date.now(), 0);
    expect(claim).toMatchObject({ code: 'claimed', runId: id, epoch: '1' });

    expect(await scripts.appendLog(id, 'w', '1', [...line, { stream: 'stderr', line: 'oops' }])).toBe(2);
    expect(await scripts.appendLog(id, 'other', '1', line)).toBe(0);
    expect(await scripts.appendLog(id, 'w', '2', line)).toBe(0);
    await scripts.finishRun({ runId: id, worker: 'w', epoch: '1', status: 'completed', exitCode: 0, reason: 'exit code 0' }, Date.now());
    expect(await scripts.appendLog(id, 'w', '1', line)).toBe(0); // ended
    expect(await client.readLog(id)).toEqual([
      expect.objectContaining({ kind: 'line', stream: 'stdout', line: 'hello' }),
      expect.objectContaining({ kind: 'line', stream: 'stderr', line: 'oops' }),
      expect.objectContaining({ kind: 'end', status: 'completed' }),
    ]);
    await scripts.deregisterWorker('w', 'tok', Date.now());
  });
});
