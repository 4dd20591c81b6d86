/**
 * Redis connections: one server, a master found through sentinels, or a
 * cluster, as the URL says (redis-url.ts). Commands fail fast with one clear
 * line when Redis is unreachable; long-lived clients (workers, log followers)
 * fail fast only on their first connect and afterwards reconnect by
 * themselves. Behind Sentinel or Cluster a failover is expected: commands
 * then wait for the new master up to FAILOVER_WAIT_MS. At connect, workers
 * refuse and commands warn about a Redis that may evict keys.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { UsageError } from '../errors.js';
import { connectFailure, isLastingRefusal } from './connect-failure.js';
import { evictionProblem } from './eviction-policy.js';
import type { RedisConnection } from './nodes.js';
import { closeRedis, forgetConnection, keepConnecting, trackConnection } from './open-connections.js';
import { parseRedisUrl, redactRedisUrl, type RedisTarget } from './redis-url.js';

export { isTlsUrl, redactRedisUrl } from './redis-url.js';

export type { RedisConnection } from './nodes.js';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * How long a command waits for Redis to come back behind Sentinel or Cluster
 * (a failover: the sentinels' down-after plus their election, or the
 * cluster's node timeout plus its), before failing in one line.
 */
export const FAILOVER_WAIT_MS = 30_000;

export interface ConnectionOptions {
  /** See redis-url.ts: `redis://`, `rediss://`, `redis+sentinel://…/MASTER`, `redis+cluster://…`. */
  redisUrl?: string;
  /** Extra ioredis options (e.g. TLS certificates, a connection name): for a cluster, each node's. */
  redisOptions?: RedisOptions;
  /**
   * Whether to check at connect that Redis never evicts keys (see
   * evictionProblem): `refuse` throws a UsageError (workers do), `warn`
   * writes one line to stderr (CLI commands do); default: no check.
   */
  evictionCheck?: 'refuse' | 'warn' | undefined;
}

/** The URL to use: the option, else FITQ_REDIS_URL, else REDIS_URL, else the local default. */
export function resolveRedisUrl(url?: string, env: NodeJS.ProcessEnv = process.env): string {
  return url || env.FITQ_REDIS_URL || env.REDIS_URL || DEFAULT_REDIS_URL;
}

/**
 * Opens a connection and waits until it is ready.
 * @param resilient keep reconnecting after the first successful connect,
 *   queueing commands meanwhile (workers, followers); otherwise commands fail
 *   at once when the connection drops (CLI commands), or behind Sentinel or
 *   Cluster once the failover took longer than FAILOVER_WAIT_MS.
 */
export async function connectRedis(options: ConnectionOptions = {}, resilient = false): Promise<RedisConnection> {
  const url = resolveRedisUrl(options.redisUrl);
  const target = parseRedisUrl(url);
  const outage = new Outage(target.kind !== 'standalone', resilient);
  const redis = createClient(target, options.redisOptions ?? {}, outage);
  // Why the first connect failed: ioredis says only "Connection is closed" when it gives up.
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    // Reported through failed commands and reconnects; ioredis would otherwise print it.
    if (outage.connectedOnce) return;
    lastError = error;
    // A master name the sentinels do not know, a login refused: no failover mends that.
    if (isLastingRefusal(error)) outage.giveUp();
  });
  redis.on('ready', () => outage.ready());
  if (!(redis instanceof Cluster)) keepConnecting(redis);
  trackConnection(redis);
  try {
    // Ready, or given up (behind Sentinel or Cluster, a failover under way is waited for).
    await new Promise<void>((resolve, reject) => {
      redis.once('ready', resolve);
      redis.once('end', () => reject(new Error('Connection is closed.')));
      redis.connect().catch(() => undefined);
    });
  } catch (error) {
    forgetConnection(redis);
    redis.disconnect();
    const cause = lastError ?? error;
    throw connectFailure(target, cause);
  }
  if (options.evictionCheck) {
    const problem = await evictionProblem(redis, redactRedisUrl(url));
    if (problem && options.evictionCheck === 'refuse') {
      await closeRedis(redis);
      throw new UsageError(problem);
    }
    if (problem) process.stderr.write(`Warning: ${problem}\n`);
  }
  return redis;
}

/**
 * How a long-lived view's connection (the dashboard, `fitq top`) retries:
 * it fails fast while Redis is away, so the view says so, and, unlike a CLI
 * command's, comes back with Redis once it was up. Call `up()` once
 * connected; before that a failed connect is final.
 */
export function comingBack(): { retryStrategy: (attempt: number) => number | null; up: () => void } {
  let connected = false;
  return { retryStrategy: (attempt) => (connected ? Math.min(attempt * 200, 2000) : null), up: () => (connected = true) };
}

/**
 * When a connection retries: a resilient one always once it was up; behind
 * Sentinel or Cluster, any one for FAILOVER_WAIT_MS from the moment it lost
 * Redis (or from its first try); otherwise never.
 */
class Outage {
  connectedOnce = false;
  /** When the connection was found down (behind Sentinel or Cluster). */
  private since: number | undefined;
  private gaveUp = false;
  constructor(
    private readonly failoverExpected: boolean,
    readonly resilient: boolean,
  ) {}
  ready(): void {
    this.connectedOnce = true;
    this.since = undefined;
  }
  /** No more tries: what failed will not mend by waiting. */
  giveUp(): void {
    this.gaveUp = true;
  }
  /** The delay before the next try, or null to give up. */
  retryDelay(attempt: number): number | null {
    const delay = Math.min(attempt * 100, 1000);
    if (this.gaveUp) return null;
    if (this.resilient && this.connectedOnce) return delay;
    if (!this.failoverExpected) return null;
    this.since ??= Date.now();
    return Date.now() - this.since < FAILOVER_WAIT_MS ? delay : null;
  }
}

function createClient(target: RedisTarget, extra: RedisOptions, outage: Outage): RedisConnection {
  const common: RedisOptions = { lazyConnect: true, retryStrategy: (attempt) => outage.retryDelay(attempt) };
  // ioredis turns TLS on for a lower-case `rediss://` only; never talk in clear to a `REDISS://` URL.
  const tls = target.tls && !extra.tls ? { tls: {} } : {};
  if (target.kind === 'standalone') {
    return new Redis(target.url, { ...common, maxRetriesPerRequest: outage.resilient ? null : 1, ...extra, ...tls });
  }
  const login = { username: target.username, password: target.password };
  if (target.kind === 'sentinel') {
    return new Redis({
      ...common,
      // Commands wait while the connection is retried (retryDelay bounds it).
      maxRetriesPerRequest: null,
      ...login,
      sentinels: target.sentinels,
      name: target.masterName,
      db: target.db,
      sentinelUsername: target.sentinelUsername,
      sentinelPassword: target.sentinelPassword,
      // Without it ioredis learns of a new master only when the old one fails it (writes meanwhile go to the old one).
      failoverDetector: true,
      // ioredis would ask the sentinels again for ever, and a first connect never settle: within the failover wait
      // (a master the sentinels name but that is down, as a failover begins), never after a lasting refusal.
      sentinelRetryStrategy: (attempt) => outage.retryDelay(attempt),
      ...extra,
      ...tls,
      ...(target.tls ? { enableTLSForSentinelMode: true, sentinelTLS: extra.tls ?? {} } : {}),
    });
  }
  const cluster: ClusterOptions = {
    lazyConnect: true,
    clusterRetryStrategy: (attempt) => outage.retryDelay(attempt),
    // A slot whose master died: tried again every 200 ms until a replica serves it (the cluster's own failover).
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 200,
    maxRedirections: Math.ceil(FAILOVER_WAIT_MS / 200),
    redisOptions: { ...login, maxRetriesPerRequest: null, ...extra, ...tls },
  };
  return new Cluster(target.nodes, cluster);
}

