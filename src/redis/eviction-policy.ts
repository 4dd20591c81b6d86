/**
 * The eviction-policy check: fitq's runs, reservations and leases are keys
 * that must never be evicted. Workers refuse, and commands warn about, a
 * Redis whose maxmemory-policy is not noeviction.
 */
import { Cluster } from 'ioredis';
import { serverNodes, type RedisConnection } from './nodes.js';

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
