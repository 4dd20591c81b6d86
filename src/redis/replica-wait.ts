/**
 * Writes confirmed by replicas (`--redis-wait-replicas`). Replication is
 * asynchronous: a write the master acknowledged may not have reached any
 * replica when the master dies, and a failover then loses it. WAIT blocks
 * until `replicas` replicas have every write this connection made so far,
 * or `timeoutMs` passes, and says how many did. With the server's
 * `min-replicas-to-write`, a write confirmed this way survives a failover
 * to any of them. WAIT counts the writes of the connection that made them:
 * on a cluster it goes to the node that served them (the namespace's slot).
 */
import { UnreplicatedError, UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import { formatDurationSpec, parseDuration } from '../units/duration.js';
import { nodeServing, type RedisConnection } from './nodes.js';

export interface ReplicaWait {
  /** Replicas that must confirm a write. */
  readonly replicas: number;
  /** How long one WAIT blocks at most. */
  readonly timeoutMs: number;
}

export const DEFAULT_REPLICA_WAIT_TIMEOUT_MS = 2_000;

/** Reads `--redis-wait-replicas N` and `--redis-wait-timeout DURATION`; undefined for N = 0 or none. */
export function parseReplicaWait(replicas: string | undefined, timeout: string | undefined): ReplicaWait | undefined {
  if (replicas === undefined || replicas === '') {
    if (timeout !== undefined && timeout !== '') throw new UsageError(`--redis-wait-timeout ${quote(timeout)} needs --redis-wait-replicas N`);
    return undefined;
  }
  if (!/^\d{1,3}$/.test(replicas.trim())) throw new UsageError(`expected --redis-wait-replicas to be a number of replicas (0 to 999), got ${quote(replicas)}`);
  const count = Number(replicas.trim());
  if (count === 0) return undefined;
  const timeoutMs = timeout === undefined || timeout === '' ? DEFAULT_REPLICA_WAIT_TIMEOUT_MS : parseDuration('--redis-wait-timeout', timeout);
  if (timeoutMs <= 0) throw new UsageError(`expected --redis-wait-timeout to be more than 0 (0 would make WAIT block for ever), got ${quote(timeout ?? '')}`);
  return { replicas: count, timeoutMs };
}

/** Blocks until `wait.replicas` replicas have every write made through `redis` to the node serving `key`, or the timeout; returns how many did. */
export async function waitForReplicas(redis: RedisConnection, key: string, wait: ReplicaWait): Promise<number> {
  return Number(await nodeServing(redis, key).call('WAIT', wait.replicas, wait.timeoutMs));
}

/** `0 of 1 replica confirmed <what> within 2s`. */
export function describeShortfall(confirmed: number, wait: ReplicaWait, what: string): string {
  return `${confirmed} of ${wait.replicas} replica${wait.replicas === 1 ? '' : 's'} confirmed ${what} within ${formatDurationSpec(wait.timeoutMs)}`;
}

/** Waits once; throws UnreplicatedError saying what `what` was when fewer replicas confirmed it. */
export async function confirmWrites(redis: RedisConnection, key: string, wait: ReplicaWait | undefined, what: string): Promise<void> {
  if (!wait) return;
  const confirmed = await waitForReplicas(redis, key, wait);
  if (confirmed < wait.replicas) {
    throw new UnreplicatedError(`${what} on the Redis master, but only ${describeShortfall(confirmed, wait, 'it')}: a failover now could lose it`);
  }
}
