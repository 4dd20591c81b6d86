/**
 * Cluster-wide pools: capacity shared by every worker of a namespace
 * (software licences, a database's connection budget, an API quota). A run
 * demanding a pool resource reserves it from the pool in the same claim that
 * reserves the rest on its worker.
 */
import type { Redis } from 'ioredis';
import { resourcesFromHash, type Resources } from '../resources/spec.js';
import type { NamespaceKeys } from './keys.js';

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

export function poolResources(pool: PoolState): PoolResource[] {
  return [...pool.capacity].map(([name, capacity]) => ({ name, capacity, used: pool.used.get(name) ?? 0n }));
}
