/**
 * Logs, once per run, staged runs a worker can never run because it lacks a
 * resource they need: the first IGNORED_RUNS_READ of a group (its oldest
 * shapes first), then one line saying there are more. Remembers only runs
 * still staged, so memory follows the queue, not the worker's lifetime; and
 * reads a bounded number of them each time a group changes, so a worker
 * beside 100,000 runs it lacks a resource for reads a few hundred ids, not
 * every run and every shape of the group at every claim that changed it.
 */
import type { RedisConnection } from '../redis/connection.js';
import type { Logger } from 'pino';
import type { NamespaceKeys } from '../queue/keys.js';
import type { IgnoredGroup } from '../queue/claim-reply.js';

/** Most staged runs of a group read (and logged) each time the group changes; as many shapes of it at most. */
const IGNORED_RUNS_READ = 100;

export class IgnoredRuns {
  /** Per group of shapes: the version last seen, the staged run ids already logged, and whether it had more. */
  private readonly seen = new Map<string, { version: string; runIds: Set<string>; more: boolean }>();

  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: NamespaceKeys,
    private readonly logger: Logger,
  ) {}

  async report(groups: readonly IgnoredGroup[]): Promise<void> {
    const current = new Set(groups.map(({ group }) => group));
    for (const group of this.seen.keys()) if (!current.has(group)) this.seen.delete(group);
    for (const { group, missing, version } of groups) {
      const previous = this.seen.get(group);
      if (previous?.version === version) continue;
      const { runIds, more } = await this.stagedRunIds(group);
      const needs = `requires resources not defined for this worker: ${missing.join(', ')}`;
      for (const runId of runIds) {
        if (previous?.runIds.has(runId)) continue;
        this.logger.info({ runId }, `Ignoring staged run ${runId} (${needs})`);
      }
      if (more && !previous?.more) this.logger.info(`Ignoring more staged runs than these ${runIds.size} (${needs}): fitq runs shows them all`);
      this.seen.set(group, { version, runIds, more });
    }
  }

  /** The first IGNORED_RUNS_READ runs staged in a group, its oldest shapes first, in one round trip per read; whether it has more. */
  private async stagedRunIds(group: string): Promise<{ runIds: Set<string>; more: boolean }> {
    const shapes = await this.redis.zrange(this.keys.group(group), 0, IGNORED_RUNS_READ);
    const pipeline = this.redis.pipeline();
    for (const shape of shapes.slice(0, IGNORED_RUNS_READ)) pipeline.zrange(this.keys.staged(shape), 0, IGNORED_RUNS_READ);
    const replies = shapes.length > 0 ? ((await pipeline.exec()) ?? []) : [];
    // (A shape whose index is no sorted set, written by hand, has no runs.)
    const all = replies.flatMap(([error, ids]) => (error ? [] : (ids as string[])));
    const more = shapes.length > IGNORED_RUNS_READ || all.length > IGNORED_RUNS_READ;
    return { runIds: new Set(all.slice(0, IGNORED_RUNS_READ)), more };
  }
}
