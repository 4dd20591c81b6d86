/**
 * The BullMQ execution queue of a worker process (`<name>.<token>`), deleted
 * when the worker stops or is reaped.
 */
import type { Redis } from 'ioredis';
import type { NamespaceKeys } from './keys.js';

export function executorQueueName(workerName: string, token: string): string {
  return `${workerName}.${token.slice(0, 8)}`;
}

/** Deletes a dead worker's execution queue; best effort. */
export async function obliterateExecutorQueue(redis: Redis, keys: NamespaceKeys, name: string): Promise<void> {
  if (!name) return;
  // Loaded only here: most commands never need BullMQ, and it is slow to load.
  const { Queue } = await import('bullmq');
  const queue = new Queue(name, { connection: redis, prefix: keys.bullPrefix });
  queue.on('error', () => {});
  await queue.obliterate({ force: true }).catch(() => {});
  await queue.close();
}
