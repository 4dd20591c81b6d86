/**
 * The BullMQ execution queue of a worker process (`<name>.<token>`), deleted
 * when the worker stops or is reaped.
 */
import type { Redis } from 'ioredis';
import type { NamespaceKeys } from './keys.js';

export function executorQueueName(workerName: string, token: string): string {
  return `${workerName}.${token.slice(0, 8)}`;
}

let bullmq: Promise<typeof import('bullmq')> | undefined;

/**
 * Loads BullMQ once. Most commands never need it, and it is slow to load, so
 * only on demand; a log follower loads it ahead, to reap promptly when a
 * lease runs out.
 */
export function loadBullmq(): Promise<typeof import('bullmq')> {
  bullmq ??= import('bullmq');
  return bullmq;
}

/** Deletes a dead worker's execution queue; best effort. */
export async function obliterateExecutorQueue(redis: Redis, keys: NamespaceKeys, name: string): Promise<void> {
  if (!name) return;
  const { Queue } = await loadBullmq();
  const queue = new Queue(name, { connection: redis, prefix: keys.bullPrefix });
  queue.on('error', () => {});
  await queue.obliterate({ force: true }).catch(() => {});
  await queue.close();
}
