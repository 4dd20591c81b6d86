/**
 * Redis connections. Commands fail fast with one clear line when Redis is
 * unreachable; long-lived clients (workers, log followers) fail fast only on
 * their first connect and afterwards reconnect by themselves.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { ConnectionError } from '../errors.js';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export interface ConnectionOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` for TLS. */
  redisUrl?: string;
  /** Extra ioredis options (e.g. TLS certificates). */
  redisOptions?: RedisOptions;
}

/** The URL to use: the option, else FITQ_REDIS_URL, else REDIS_URL, else the local default. */
export function resolveRedisUrl(url?: string, env: NodeJS.ProcessEnv = process.env): string {
  return url || env.FITQ_REDIS_URL || env.REDIS_URL || DEFAULT_REDIS_URL;
}

/** The URL with any password (user info or `?password=`) replaced by `***`, for messages. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
    return parsed.toString().replace('%2A%2A%2A', '***');
  } catch {
    return url.replace(/\/\/.*@/, '//***@');
  }
}

const openConnections = new Set<Redis>();

/** How many connections made here are still open (tests assert none leak). */
export function openConnectionCount(): number {
  return openConnections.size;
}

/**
 * Opens a connection and waits until it is ready.
 * @param resilient keep reconnecting after the first successful connect,
 *   queueing commands meanwhile (workers, followers); otherwise commands fail
 *   at once when the connection drops (CLI commands).
 */
export async function connectRedis(options: ConnectionOptions = {}, resilient = false): Promise<Redis> {
  const url = resolveRedisUrl(options.redisUrl);
  let connectedOnce = false;
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: resilient ? null : 1,
    retryStrategy: (attempt) => (resilient && connectedOnce ? Math.min(attempt * 100, 2000) : null),
    ...options.redisOptions,
  });
  redis.on('error', () => {
    // Reported through failed commands and reconnects; ioredis would otherwise print it.
  });
  redis.once('ready', () => {
    connectedOnce = true;
  });
  openConnections.add(redis);
  redis.once('end', () => openConnections.delete(redis));
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    openConnections.delete(redis);
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConnectionError(`cannot reach Redis at ${redactRedisUrl(url)}: ${reason}`, { cause: error });
  }
  return redis;
}

/** Closes a connection, politely if it is up. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') {
    await redis.quit().catch(() => redis.disconnect());
  } else {
    redis.disconnect();
  }
  openConnections.delete(redis);
}
