/**
 * ioredis ends a connection for good when its connector fails as it
 * reconnects (behind Sentinel, a failover announced while it asks the
 * sentinels: "Connection is closed."), whatever its retry strategy says.
 * fitq connects such a connection again while its strategy still waits;
 * (one fitq closes stays closed: the open-connection count every test
 * checks after it). The end is made here as ioredis makes it:
 * the connection ends without fitq closing it.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { closeRedis, connectRedis } from '../../src/redis/connection.js';
import { redisUrl } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

describe('a connection ioredis ended on its own', () => {
  it('is connected again, and answers', async () => {
    const redis = (await connectRedis({ redisUrl: redisUrl() }, true)) as Redis;
    try {
      // Nothing on its way (a command cut off would fail, as any would).
      expect(await redis.ping()).toBe('PONG');
      const ended = new Promise((resolve) => redis.once('end', resolve));
      redis.disconnect();
      await ended;
      await waitFor('the connection to be ready again', async () => redis.status === 'ready');
      expect(await redis.ping()).toBe('PONG');
    } finally {
      await closeRedis(redis);
    }
  });

});
