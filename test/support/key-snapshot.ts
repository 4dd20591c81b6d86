/**
 * Every key of a namespace with its content, canonical, to show that
 * something changed no key: compare a snapshot taken before with one after.
 */
import type { Redis } from 'ioredis';

/** Each key under `base` with its type and content (a hash's field order may change as Redis rehashes it on reads: sorted). */
export async function snapshotKeys(redis: Redis, base: string): Promise<Map<string, string>> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${base}*`, 'COUNT', 1000);
    found.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  const contents = new Map<string, string>();
  for (const key of found.sort()) {
    const type = await redis.type(key);
    const content =
      type === 'hash' ? Object.entries(await redis.hgetall(key)).sort()
      : type === 'zset' ? await redis.zrange(key, 0, -1, 'WITHSCORES')
      : type === 'list' ? await redis.lrange(key, 0, -1)
      : type === 'set' ? (await redis.smembers(key)).sort()
      : type === 'stream' ? await redis.xrange(key, '-', '+')
      : await redis.get(key);
    contents.set(key, `${type} ${JSON.stringify(content)}`);
  }
  return contents;
}
