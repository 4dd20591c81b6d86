/**
 * Looking run ids up by prefix reads the index of ids, never the runs: a
 * Redis user allowed only the index keys (and the one run key an exact match
 * would be) can resolve a prefix among thousands of runs, and rebuild the
 * index, without Redis refusing it any key.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { Scripts } from '../../src/queue/scripts.js';
import { connectClient, newQueue, redisUrl } from '../support/fitq.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  // Last in, first out: the user's connection closes before the user goes.
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('resolveRunIds', () => {
  it('finds a unique prefix among 5,000 runs, touching no run', async () => {
    const queue = newQueue();
    const client = await connectClient(queue);
    const target = 'zz-target';
    await client.stage([{ command: ['true'], resources: 'never=1', repeat: 5000 }, { command: ['true'], resources: 'never=1', runId: target }]);

    // A user that may read the index key, nothing else (a read-only script needs no EVAL).
    const user = `probe-${randomBytes(4).toString('hex')}`;
    const password = randomBytes(8).toString('hex');
    const { keys } = client;
    await client.redis.call('ACL', 'SETUSER', user, 'on', `>${password}`, 'resetkeys', `%R~${keys.ids}`, '-@all', '+eval_ro', '+evalsha_ro', '+zrange', '+zscore');
    cleanups.push(() => client.redis.call('ACL', 'DELUSER', user));
    const url = new URL(redisUrl());
    const probe = new Redis({ host: url.hostname, port: Number(url.port), username: user, password, enableReadyCheck: false, lazyConnect: true });
    await probe.connect();
    cleanups.push(() => probe.quit());
    const scripts = new Scripts(probe, keys, 100);

    expect(await scripts.resolveRunIds(['zz'], 5)).toEqual([[target]]);
    expect(await scripts.resolveRunIds([target], 5)).toEqual([[target]]);
    // The same user is refused a run key, so the check above does mean something.
    await expect(probe.hget(keys.run(target), 'status')).rejects.toThrow(/NOPERM/);
  });
});
