/**
 * Reaping in bounded steps (reapWorkers-*.lua): each call reaps a few dead
 * workers, their runs' ends and what their claims reserved together, so a
 * worker not yet reaped still holds all it reserved (capacity comes back
 * late, never early), and the calls that follow reap the rest.
 */
import { describe, expect, it } from 'vitest';
import { reap } from '../../src/operations/upkeep.js';
import { Scripts } from '../../src/queue/scripts.js';
import { REAP_BATCH } from '../../src/queue/upkeep-budgets.js';
import type { WorkerRegistration } from '../../src/queue/worker-calls.js';
import { connectClient, connectContext, newQueue } from '../support/fitq.js';

const registrationOf = (name: string, leaseMs: number): WorkerRegistration => ({
  name, token: 'tok', leaseMs, concurrency: 0, host: 'h', pid: 1, resources: 'slot=1',
});

describe('reaping in bounded steps', () => {
  it('reaps more dead workers than one call takes over several calls; each gives back its pool share only when it is reaped', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const scripts = new Scripts(client.redis, client.keys, 100);
    const dead = REAP_BATCH * 2 + 1;
    await client.setPool(`lic=${dead}`);
    const names = Array.from({ length: dead }, (_, i) => `dead${i}`);
    for (const name of names) {
      expect(await scripts.registerWorker(registrationOf(name, 60_000))).toBe(true);
      await client.stage({ command: ['true'], resources: 'slot=1 lic=1' });
      expect(await scripts.claimRun(name, 'tok', 0)).toMatchObject({ code: 'claimed' });
    }
    expect(await client.redis.hget(client.keys.poolUsed, 'lic')).toBe(String(dead));
    // Their leases run out together (set by hand: staging reaps, so a short lease would lapse during the setup).
    for (const name of names) await client.redis.zadd(client.keys.workers, 1, name);

    // One call: REAP_BATCH workers reaped, their runs lost and their shares back; the others hold theirs.
    const first = await scripts.reapWorkers();
    expect(first.reaped).toHaveLength(REAP_BATCH);
    expect(await client.redis.hget(client.keys.poolUsed, 'lic')).toBe(String(dead - REAP_BATCH));
    for (const name of names) {
      const reaped = first.reaped.includes(name);
      expect(await client.redis.exists(client.keys.worker(name).reserved), name).toBe(reaped ? 0 : 1);
    }
    // (As stored: reads show a dead worker's runs as upkeep will leave them.)
    const stored = async () => Promise.all((await client.redis.zrange(client.keys.ids, 0, -1)).map((id) => client.redis.hget(client.keys.run(id), 'status')));
    expect((await stored()).filter((status) => status === 'lost')).toHaveLength(REAP_BATCH);
    expect((await stored()).filter((status) => status === 'running')).toHaveLength(dead - REAP_BATCH);

    // The operation goes on until none is left.
    await reap(await connectContext(queue));
    expect(await client.redis.zcard(client.keys.workers)).toBe(0);
    expect(await client.redis.hget(client.keys.poolUsed, 'lic')).toBe('0');
    expect(await stored()).toEqual(Array.from({ length: dead }, () => 'lost'));
  });
});
