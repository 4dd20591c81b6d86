/**
 * Which refused writes a worker tries again: Redis's passing refusals (out
 * of memory, busy, loading, read-only replica) and lost connections, never
 * an error a script raised or an ACL refusal, which would fail the same way
 * again. The errors are Redis's own, from a real server.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRetryable, retryDelayMs, retryRefused, RETRY_FIRST_MS, RETRY_MAX_MS } from '../../src/worker/retry.js';
import { fillUp, startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await startRedisServer({ users: { reader: 'on >pw ~* &* -@all +get +info +hello +auth' } });
  redis = new Redis(server.url);
});

afterAll(async () => {
  redis.disconnect();
  await server.dispose();
});

const refusal = (promise: Promise<unknown>) => promise.then(() => expect.fail('Redis took it'), (error: unknown) => error);

describe('isRetryable', () => {
  it('retries what Redis refuses for now: out of memory', async () => {
    const lift = await fillUp(server.url);
    try {
      const error = await refusal(redis.eval('#!lua\nredis.call("SET", KEYS[1], "1")', 1, 'k'));
      expect(String(error)).toMatch(/OOM/);
      expect(isRetryable(error)).toBe(true);
    } finally {
      await lift();
    }
  });

  it('retries a lost connection', async () => {
    const lost = new Redis(server.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
    const error = await refusal(lost.get('k'));
    expect(isRetryable(error)).toBe(true);
  });

  it('does not retry an error a script raised, a wrong type, an ACL refusal, or a reply fitq cannot read', async () => {
    await redis.set('str', 'x');
    const raised = await refusal(redis.eval('error("broken")', 0));
    const wrongType = await refusal(redis.hget('str', 'f'));
    const reader = new Redis(server.url.replace('redis://', 'redis://reader:pw@'));
    const denied = await refusal(reader.set('k', '1'));
    reader.disconnect();
    for (const error of [raised, wrongType, denied]) expect(isRetryable(error), String(error)).toBe(false);
    expect(isRetryable('not an error')).toBe(false);
    // A reply fitq cannot read is its own fault, not Redis's passing state.
    expect(isRetryable(new Error('unexpected script reply code 7'))).toBe(false);
  });
});

describe('retryRefused', () => {
  it('waits longer each time, within its bounds, and stops when given up', async () => {
    for (let attempt = 1; attempt < 30; attempt++) {
      const delay = retryDelayMs(attempt);
      const full = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (attempt - 1));
      expect(delay).toBeGreaterThanOrEqual(full * 0.8 - 1);
      expect(delay).toBeLessThanOrEqual(full);
    }
    const lift = await fillUp(server.url);
    let tries = 0;
    let givenUp = false;
    const write = () => {
      tries += 1;
      return redis.set('k', '1');
    };
    const retried: number[] = [];
    const done = retryRefused(write, {
      givenUp: () => givenUp,
      onRetry: (_error, attempt) => {
        retried.push(attempt);
        if (attempt === 2) givenUp = true;
      },
    });
    await expect(done).rejects.toThrow(/OOM/);
    expect(retried).toEqual([1, 2]);
    expect(tries).toBe(2);
    await lift();
    // Once Redis takes it, it is done.
    expect(await retryRefused(write, { givenUp: () => false, onRetry: () => {} })).toBe('OK');
  });
});
