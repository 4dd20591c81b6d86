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
import { serverNodes, type RedisConnection } from './nodes.js';
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

const openConnections = new Set<RedisConnection>();

/** How many connections made here are still open (tests assert none leak). */
export function openConnectionCount(): number {
  return openConnections.size;
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
  openConnections.add(redis);
  redis.once('end', () => openConnections.delete(redis));
  if (!(redis instanceof Cluster)) keepConnecting(redis);
  try {
    // Ready, or given up (behind Sentinel or Cluster, a failover under way is waited for).
    await new Promise<void>((resolve, reject) => {
      redis.once('ready', resolve);
      redis.once('end', () => reject(new Error('Connection is closed.')));
      redis.connect().catch(() => undefined);
    });
  } catch (error) {
    redis.disconnect();
    openConnections.delete(redis);
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

/** Connections fitq closes on purpose: their end is no cue to connect again. */
const closing = new WeakSet<object>();

/** Closes a connection fitq opened with keepConnecting (a subscriber), for good. */
export function disconnectForGood(redis: Redis): void {
  closing.add(redis);
  redis.disconnect();
}

/**
 * ioredis ends a connection for good when its connector fails as it
 * reconnects, whatever its retryStrategy says: behind Sentinel, a failover
 * announced while it was asking the sentinels for the master makes it fail
 * with "Connection is closed." (seen under load in the failover tests: a
 * worker never came back). Such a connection is connected again here, as
 * long as its retryStrategy still waits; one fitq closes (closeRedis,
 * disconnectForGood) is not.
 */
export function keepConnecting(redis: Redis): void {
  let attempt = 0;
  redis.on('ready', () => (attempt = 0));
  redis.on('end', () => {
    if (closing.has(redis)) return;
    const delay = redis.options.retryStrategy?.(++attempt);
    if (typeof delay !== 'number') return;
    openConnections.add(redis);
    setTimeout(() => {
      if (closing.has(redis) || redis.status !== 'end') return;
      redis.once('end', () => openConnections.delete(redis));
      redis.connect().catch(() => undefined);
    }, delay);
  });
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

/**
 * One line when Redis may evict keys, or undefined: its `maxmemory-policy`
 * (from INFO memory; fitq's ACL rule allows INFO, not CONFIG) is anything
 * but `noeviction`. fitq's runs, reservations and worker leases are keys: an
 * evicted one is a run that vanishes, a reservation never released, a live
 * worker taken for gone. Says nothing when INFO is refused or lacks the field.
 */
export async function evictionProblem(redis: RedisConnection, shownUrl: string): Promise<string | undefined> {
  return readEvictionProblem(redis, shownUrl).catch(() => undefined);
}

/** evictionProblem, failing when INFO fails (refused, or Redis unreachable). */
export async function readEvictionProblem(redis: RedisConnection, shownUrl: string): Promise<string | undefined> {
  // On a cluster each master keeps its own policy: any one evicting loses the namespaces it serves.
  for (const node of serverNodes(redis)) {
    const where = redis instanceof Cluster ? `${shownUrl} (node ${node.options.host}:${node.options.port})` : shownUrl;
    const problem = evictionProblemIn(await node.info('memory'), where);
    if (problem) return problem;
  }
  return undefined;
}

/** evictionProblem, from the text of `INFO memory`. */
export function evictionProblemIn(info: string, shownUrl: string): string | undefined {
  const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  const policy = field('maxmemory_policy');
  if (policy === undefined || policy === 'noeviction') return undefined;
  const maxmemory = Number(field('maxmemory') ?? '0');
  const limit = maxmemory > 0 ? `maxmemory ${field('maxmemory_human') ?? maxmemory}` : 'no maxmemory yet';
  return (
    `Redis at ${shownUrl} may evict keys (maxmemory-policy ${policy}, ${limit}): set maxmemory-policy noeviction, ` +
    "since fitq's runs and reservations are keys that must not vanish"
  );
}

/** Closes a connection, politely if it is up. */
export async function closeRedis(redis: RedisConnection): Promise<void> {
  closing.add(redis);
  if (redis.status === 'ready') await redis.quit().catch(() => undefined);
  // Also after QUIT: ioredis's QUIT leaves the connections to the sentinels (failoverDetector) open.
  redis.disconnect();
  openConnections.delete(redis);
}

/**
 * One line for a command Redis refused to the connection's user (an ACL
 * without a permission fitq needs), or undefined for any other error.
 * `refused` says what was refused, e.g. "a command the execution queue needs".
 */
export function describeAclRefusal(error: Error, refused = 'a command'): string | undefined {
  // Scripts report a refused command, key or channel as "ERR The user executing the script can't …".
  if (!/\b(NOPERM|NOAUTH)\b|user executing the script can't/.test(error.message)) return undefined;
  return `Redis refused ${refused}: ${replyReason(error.message)} (the Redis user lacks a permission fitq needs)`;
}

/** A Redis error reply on one line, without the script position Redis adds to an error inside a script. */
function replyReason(message: string): string {
  return message
    .replace(/\s+/g, ' ')
    .replace(/ script: [0-9a-f]{40}, on @user_script:\d+\.?$/, '')
    .trim();
}

/**
 * Redis's reply when it refuses a command while out of memory (used memory
 * over its maxmemory: with noeviction it refuses writes instead of evicting):
 * the error itself, or in a MULTI that Redis discarded (EXECABORT) the
 * refusal of one of its commands; undefined for any other error.
 */
function outOfMemoryReply(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const previous = (error as { previousErrors?: unknown }).previousErrors;
  const replies = [error, ...(Array.isArray(previous) ? previous : [])];
  return replies.map((reply) => (reply instanceof Error ? reply.message : '')).find((message) => /^OOM\b/.test(message));
}

/** Whether Redis refused this because it is out of memory (see outOfMemoryReply). */
export function isOutOfMemory(error: unknown): boolean {
  return outOfMemoryReply(error) !== undefined;
}

/**
 * One line for a command a Redis Cluster could not serve within the failover
 * wait: ioredis gives up on it with "Too many Cluster redirections. Last
 * error: …" once the slot's master and every replica of it stayed down (or
 * the cluster said CLUSTERDOWN) through its redirections. Undefined for
 * other errors.
 */
export function describeClusterStall(error: Error): string | undefined {
  const match = /^Too many Cluster redirections\. Last error: (?:\w*Error: )?(.*)$/s.exec(error.message);
  if (!match) return undefined;
  const last = match[1]!.trim() || 'none';
  return `the Redis Cluster served no answer for the namespace within ${FAILOVER_WAIT_MS / 1000}s (the master of its slot and every replica of it may be down; last error: ${last})`;
}

/**
 * One line for a command Redis refused because it is out of memory, or
 * undefined for any other error. fitq's scripts that write are refused
 * whole then, before they write anything (their `#!lua` line); reads go on.
 */
export function describeOutOfMemory(error: Error, refused = 'a command'): string | undefined {
  const reply = outOfMemoryReply(error);
  if (reply === undefined) return undefined;
  return `Redis refused ${refused}: ${replyReason(reply).replace(/\.$/, '')} (Redis is out of memory: raise its maxmemory, or free memory)`;
}
