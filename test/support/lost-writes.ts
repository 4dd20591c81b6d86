/**
 * Writes lost as a failover loses them, on one Redis: every key of a
 * namespace is saved (DUMP) at one moment and put back (RESTORE) later, so
 * Redis then holds what a replica that never received the writes made in
 * between holds. (The real failover: test/fault/lost-writes.test.ts.)
 */
import type { Redis } from 'ioredis';

export type SavedKeys = Map<string, { dump: Buffer; ttl: number }>;

/** Every key under `base`, dumped with its time to live. */
export async function saveKeys(redis: Redis, base: string): Promise<SavedKeys> {
  const saved: SavedKeys = new Map();
  for (const key of await redis.keys(`${base}*`)) {
    const dump = await redis.dumpBuffer(key);
    if (dump) saved.set(key, { dump, ttl: await redis.pttl(key) });
  }
  return saved;
}

/** Puts the saved keys back, and nothing else: the writes made since they were saved are lost. */
export async function loseWritesSince(redis: Redis, base: string, saved: SavedKeys): Promise<void> {
  const now = await redis.keys(`${base}*`);
  if (now.length > 0) await redis.del(...now);
  for (const [key, { dump, ttl }] of saved) await redis.restore(key, ttl > 0 ? ttl : 0, dump);
}
