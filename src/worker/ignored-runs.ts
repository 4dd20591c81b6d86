/**
 * Logs, once per run, staged runs a worker can never run because it lacks a
 * resource they need. Remembers only runs still staged, so memory follows
 * the queue, not the worker's lifetime.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { NamespaceKeys } from '../queue/keys.js';
import type { IgnoredGroup } from '../queue/claim-reply.js';

export class IgnoredRuns {
  /** Per group of shapes: the version last seen and the staged run ids already logged. */
  private readonly seen = new Map<string, { version: string; runIds: Set<string> }>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: NamespaceKeys,
    private readonly logger: Logger,
  ) {}

  async report(groups: readonly IgnoredGroup[]): Promise<void> {
    const current = new Set(groups.map(({ group }) => group));
    for (const group of this.seen.keys()) if (!current.has(group)) this.seen.delete(group);
    for (const { group, missing, version } of groups) {
      const previous = this.seen.get(group);
      if (previous?.version === version) continue;
      const runIds = await this.stagedRunIds(group);
      for (const runId of runIds) {
        if (previous?.runIds.has(runId)) continue;
        this.logger.info(
          { runId },
          `Ignoring staged run ${runId} (requires resources not defined for this worker: ${missing.join(', ')})`,
        );
      }
      this.seen.set(group, { version, runIds });
    }
  }

  /** The runs staged in every shape of a group, in one round trip per read. */
  private async stagedRunIds(group: string): Promise<Set<string>> {
    const shapes = await this.redis.zrange(this.keys.group(group), 0, -1);
    const pipeline = this.redis.pipeline();
    for (const shape of shapes) pipeline.zrange(this.keys.staged(shape), 0, -1);
    const replies = shapes.length > 0 ? ((await pipeline.exec()) ?? []) : [];
    // (A shape whose index is no sorted set, written by hand, has no runs.)
    return new Set(replies.flatMap(([error, ids]) => (error ? [] : (ids as string[]))));
  }
}
