/**
 * The connections fitq opened and has not closed: which are open (tests
 * assert none leak), which fitq closes on purpose, and connecting again a
 * connection ioredis ended on its own while its retry strategy still waits.
 */
import type { Redis } from 'ioredis';
import type { RedisConnection } from './nodes.js';

/** Opened by connectRedis; gone once fitq closes it, or ioredis ended it with no reconnect planned. */
const openConnections = new Set<RedisConnection>();
/** Connections fitq closes on purpose: their end is no cue to connect again. */
const closing = new WeakSet<object>();
/** Reconnects keepConnecting has planned, by connection. */
const plannedReconnects = new WeakMap<object, NodeJS.Timeout>();

/** How many connections made here are still open (tests assert none leak). */
export function openConnectionCount(): number {
  return openConnections.size;
}

/** Counts `redis` as open until fitq closes it or it ends for good (with keepConnecting, when no reconnect is planned). */
export function trackConnection(redis: RedisConnection): void {
  openConnections.add(redis);
  redis.on('end', () => {
    if (!plannedReconnects.has(redis)) openConnections.delete(redis);
  });
}

/** From now on `redis` is closed for good: no reconnect planned or to come, no longer counted as open. */
export function forgetConnection(redis: RedisConnection): void {
  closing.add(redis);
  clearTimeout(plannedReconnects.get(redis));
  plannedReconnects.delete(redis);
  openConnections.delete(redis);
}

/** Closes a connection, politely if it is up. */
export async function closeRedis(redis: RedisConnection): Promise<void> {
  forgetConnection(redis);
  if (redis.status === 'ready') await redis.quit().catch(() => undefined);
  // Also after QUIT: ioredis's QUIT leaves the connections to the sentinels (failoverDetector) open.
  redis.disconnect();
}

/** Closes a connection fitq opened with keepConnecting (a subscriber), for good. */
export function disconnectForGood(redis: Redis): void {
  forgetConnection(redis);
  redis.disconnect();
}

/**
 * ioredis ends a connection for good when its connector fails as it
 * reconnects, whatever its retryStrategy says: behind Sentinel, a failover
 * announced while it was asking the sentinels for the master makes it fail
 * with "Connection is closed." (seen under load in the failover tests: a
 * worker never came back). Such a connection is connected again here, as
 * long as its retryStrategy still waits; one fitq closes (closeRedis,
 * disconnectForGood) is not. Call it before trackConnection: the plan is
 * made before the end is counted.
 */
export function keepConnecting(redis: Redis): void {
  let attempt = 0;
  redis.on('ready', () => (attempt = 0));
  redis.on('end', () => {
    if (closing.has(redis)) return;
    const delay = redis.options.retryStrategy?.(++attempt);
    if (typeof delay !== 'number') return;
    const timer = setTimeout(() => {
      plannedReconnects.delete(redis);
      if (closing.has(redis) || redis.status !== 'end') return;
      redis.connect().catch(() => undefined);
    }, delay);
    plannedReconnects.set(redis, timer);
  });
}
