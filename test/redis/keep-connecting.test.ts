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
import { connectRedis } from '../../src/redis/connection.js';
import { closeRedis, openConnectionCount } from '../../src/redis/open-connections.js';
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

  it('closed by fitq while its reconnect waits: counted closed at once, never connected again', async () => {
    const before = openConnectionCount();
    const redis = (await connectRedis({ redisUrl: redisUrl() }, true)) as Redis;
    const ended = new Promise((resolve) => redis.once('end', resolve));
    redis.disconnect();
    await ended;
    // The reconnect is planned (the strategy's first delay, 100 ms): closing now cancels it.
    expect(redis.status).toBe('end');
    expect(openConnectionCount()).toBe(before + 1);
    await closeRedis(redis);
    expect(openConnectionCount()).toBe(before);
    const connecting = new Promise<string>((resolve) => redis.once('connect', () => resolve('connected again')));
    const waited = new Promise<string>((resolve) => setTimeout(() => resolve('still closed'), 1500));
    expect(await Promise.race([connecting, waited])).toBe('still closed');
  });
});
