/**
 * Redis connections. Commands fail fast with one clear line when Redis is
 * unreachable; long-lived clients (workers, log followers) fail fast only on
 * their first connect and afterwards reconnect by themselves. At connect,
 * workers refuse and commands warn about a Redis that may evict keys.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { ConnectionError, UsageError } from '../errors.js';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export interface ConnectionOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` for TLS. */
  redisUrl?: string;
  /** Extra ioredis options (e.g. TLS certificates). */
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

/** Whether the URL asks for TLS (`rediss://`, in any case). */
export function isTlsUrl(url: string): boolean {
  return /^rediss:\/\//i.test(url.trim());
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
    // ioredis turns TLS on for a lower-case `rediss://` only; never talk in clear to a `REDISS://` URL.
    ...(isTlsUrl(url) && !options.redisOptions?.tls ? { tls: {} } : {}),
  });
  // Why the first connect failed: ioredis rejects it with a bare "Connection is closed".
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    // Reported through failed commands and reconnects; ioredis would otherwise print it.
    if (!connectedOnce) lastError = error;
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
    throw new ConnectionError(connectFailure(redactRedisUrl(url), lastError ?? error), { cause: lastError ?? error });
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
 * One line when Redis may evict keys, or undefined: its `maxmemory-policy`
 * (from INFO memory; fitq's ACL rule allows INFO, not CONFIG) is anything
 * but `noeviction`. fitq's runs, reservations and worker leases are keys: an
 * evicted one is a run that vanishes, a reservation never released, a live
 * worker taken for gone. Says nothing when INFO is refused or lacks the field.
 */
export async function evictionProblem(redis: Redis, shownUrl: string): Promise<string | undefined> {
  let info: string;
  try {
    info = await redis.info('memory');
  } catch {
    return undefined;
  }
  return evictionProblemIn(info, shownUrl);
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

/** Error codes Node gives when the server's certificate cannot be verified or TLS fails. */
const TLS_ERROR = /CERT|SIGNATURE|ERR_TLS|ERR_SSL|ERR_OSSL|EPROTO/;

/**
 * The reason in an OpenSSL error string, e.g. "tlsv13 alert certificate
 * required" out of "806C…:error:0A00045C:SSL routines:ssl3_read_bytes:tlsv13
 * alert certificate required:../deps/…/rec_layer_s3.c:1601:SSL alert number 116".
 */
export function opensslReason(message: string): string {
  const line = message.split('\n')[0]!.trim();
  return /(?:^|:)error:[0-9A-Fa-f]+:[^:]*:[^:]*:([^:]+)/.exec(line)?.[1]?.trim() || line;
}

/** One line saying why the first connect failed: unreachable, TLS, or login refused. */
function connectFailure(shownUrl: string, error: unknown): string {
  const reason = opensslReason(error instanceof Error ? error.message : String(error));
  const code = (error as { code?: unknown } | undefined)?.code;
  if (/^(WRONGPASS|NOAUTH)\b/.test(reason)) return `Redis at ${shownUrl} refused the login: ${reason}`;
  if (/^NOPERM\b/.test(reason)) return `Redis at ${shownUrl} refused a command: ${reason}`;
  // Under TLS 1.3 a server refusing the client's certificate (or its lack)
  // says so after the handshake; a client writing meanwhile sees a reset (Node's
  // "disconnected before secure TLS connection was established"), not the alert.
  if (isTlsUrl(shownUrl) && (code === 'ECONNRESET' || code === 'EPIPE')) {
    return `TLS connection to Redis at ${shownUrl} failed: the server closed it as it was set up (${reason}): client certificate required? give one with --redis-cert and --redis-key`;
  }
  if ((typeof code === 'string' && TLS_ERROR.test(code)) || /\b(certificate|SSL|TLS)\b/i.test(reason)) {
    return `TLS connection to Redis at ${shownUrl} failed: ${reason}`;
  }
  return `cannot reach Redis at ${shownUrl}: ${reason}`;
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
 * One line for a command Redis refused because it is out of memory, or
 * undefined for any other error. fitq's scripts that write are refused
 * whole then, before they write anything (their `#!lua` line); reads go on.
 */
export function describeOutOfMemory(error: Error, refused = 'a command'): string | undefined {
  const reply = outOfMemoryReply(error);
  if (reply === undefined) return undefined;
  return `Redis refused ${refused}: ${replyReason(reply).replace(/\.$/, '')} (Redis is out of memory: raise its maxmemory, or free memory)`;
}
