/**
 * Cluster-wide pools: capacity shared by every worker of a namespace
 * (software licences, a database's connection budget, an API quota). A run
 * demanding a pool resource reserves it from the pool in the same claim that
 * reserves the rest on its worker. An array's limit (`--array 0-9%2`) is a
 * pool resource of its own, `array.<id>` (resources/array-limit.ts): listed with the array
 * it limits and how its runs stand.
 */
import { UsageError } from '../errors.js';
import { arrayOfLimit } from '../resources/array-limit.js';
import { formatMicros, MICROS_PER_UNIT } from '../resources/amount.js';
import { parseResourceSpecs, resourcesFromHash, type Resources } from '../resources/spec.js';
import { readArrayTallies } from './array-tallies.js';
import type { QueueContext, ReadContext } from './context.js';

export interface PoolResource {
  name: string;
  /** Micros. */
  capacity: bigint;
  /** Micros reserved by running runs. */
  used: bigint;
  /** For an array's limit: the array, and how many of its runs run and wait (staged or held; none known for an array fitq does not count). */
  array?: { id: string; running: number; staged: number };
}

export interface PoolState {
  capacity: Resources;
  used: Resources;
}

/**
 * Sets the capacity of cluster-wide pool resources, shared by every worker
 * of the namespace; e.g. `license=4`. Zero is allowed (nothing may take it).
 */
export async function setPool(ctx: QueueContext, resources: string | readonly string[]): Promise<PoolResource[]> {
  const specs = typeof resources === 'string' ? [resources] : [...resources];
  const amounts = parseResourceSpecs(specs, { keepZero: true });
  if (amounts.size === 0) throw new UsageError('name the pool resources to set, e.g. license=4');
  await ctx.scripts.setPool('set', [...amounts].flatMap(([name, micros]) => [name, formatMicros(micros)]));
  return listPool(ctx);
}

/**
 * Removes pool resources; runs holding some keep it until they end. An
 * array's limit only once the array has no staged or running runs (they
 * would never start without it).
 */
export async function removePool(ctx: QueueContext, names: readonly string[]): Promise<void> {
  if (names.length === 0) throw new UsageError('name the pool resources to remove');
  await ctx.scripts.setPool('remove', [...names]);
}

export async function readPool({ redis, keys }: ReadContext): Promise<PoolState> {
  const [capacity, used] = await Promise.all([redis.hgetall(keys.poolCapacity), redis.hgetall(keys.poolUsed)]);
  return { capacity: resourcesFromHash(capacity), used: resourcesFromHash(used) };
}

/** Every pool resource with its capacity and use; an array's limit with its array, after the others. */
export async function listPool(ctx: ReadContext): Promise<PoolResource[]> {
  const pool = await readPool(ctx);
  const resources = [...pool.capacity].map(([name, capacity]) => ({ name, capacity, used: pool.used.get(name) ?? 0n }));
  const arrays = resources.flatMap(({ name }) => arrayOfLimit(name) ?? []);
  const tallies = await readArrayTallies(ctx, arrays);
  const limits = resources.flatMap((resource) => {
    const id = arrayOfLimit(resource.name);
    if (id === undefined) return [];
    // Each running run of the array holds 1 of its limit.
    const running = Number(resource.used / MICROS_PER_UNIT);
    const open = tallies.get(id)?.open ?? running;
    return [{ ...resource, array: { id, running, staged: Math.max(0, open - running) } }];
  });
  return [...resources.filter(({ name }) => arrayOfLimit(name) === undefined), ...limits];
}
