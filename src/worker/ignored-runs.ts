/**
 * Logs, once per run, staged runs a worker can never run because it lacks a
 * resource they need. Remembers only runs still staged, so memory follows
 * the queue, not the worker's lifetime.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { NamespaceKeys } from '../queue/keys.js';
import type { IgnoredShape } from '../queue/scripts.js';

export class IgnoredRuns {
  /** Per shape: the version last seen and the staged run ids already logged. */
  private readonly seen = new Map<string, { version: string; runIds: Set<string> }>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: NamespaceKeys,
    private readonly logger: Logger,
  ) {}

  async report(shapes: readonly IgnoredShape[]): Promise<void> {
    const current = new Set(shapes.map(({ shape }) => shape));
    for (const shape of this.seen.keys()) if (!current.has(shape)) this.seen.delete(shape);
    for (const { shape, missing, version } of shapes) {
      const previous = this.seen.get(shape);
      if (previous?.version === version) continue;
      const runIds = new Set(await this.redis.zrange(this.keys.staged(shape), 0, -1));
      for (const runId of runIds) {
        if (previous?.runIds.has(runId)) continue;
        this.logger.info(
          { runId },
          `Ignoring staged run ${runId} (requires resources not defined for this worker: ${missing.join(', ')})`,
        );
      }
      this.seen.set(shape, { version, runIds });
    }
  }
}
