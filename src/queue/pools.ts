/**
 * Cluster-wide pools: capacity shared by every worker of a namespace
 * (software licences, a database's connection budget, an API quota). A run
 * demanding a pool resource reserves it from the pool in the same claim that
 * reserves the rest on its worker.
 */
import type { Redis } from 'ioredis';
import { resourcesFromHash, type Resources } from '../resources/spec.js';
import type { NamespaceKeys } from './keys.js';
import { ARRAY_RESOURCE_PREFIX } from './sweep.js';

export interface PoolResource {
  name: string;
  /** Micros. */
  capacity: bigint;
  /** Micros reserved by running runs. */
  used: bigint;
}

export interface PoolState {
  capacity: Resources;
  used: Resources;
}

export async function readPool(redis: Redis, keys: NamespaceKeys): Promise<PoolState> {
  const [capacity, used] = await Promise.all([redis.hgetall(keys.poolCapacity), redis.hgetall(keys.poolUsed)]);
  return { capacity: resourcesFromHash(capacity), used: resourcesFromHash(used) };
}

/**
 * The pool's resources. An array's limit (`array.<id>`, see sweep.ts) is
 * one only while the array has staged or running runs: some of it in use,
 * or a group of staged shapes (`groups`) demanding it; `activeNames` are
 * the resource names of those groups.
 */
export function poolResources(pool: PoolState, activeNames?: ReadonlySet<string>): PoolResource[] {
  return [...pool.capacity]
    .map(([name, capacity]) => ({ name, capacity, used: pool.used.get(name) ?? 0n }))
    .filter(({ name, used }) => activeNames === undefined || !name.startsWith(ARRAY_RESOURCE_PREFIX) || used > 0n || activeNames.has(name));
}

/** The resource names of the groups of shapes that have staged runs. */
export async function stagedResourceNames(redis: Redis, keys: NamespaceKeys): Promise<Set<string>> {
  const groups = Object.keys(await redis.hgetall(keys.groups).catch(() => ({})));
  return new Set(groups.flatMap((group) => group.split(',')));
}
