/**
 * Pipelines whose replies are read as they are: a command Redis refused (an
 * ACL without a permission, a key of another type) fails the read, never
 * passes for "nothing there".
 */
import type { ChainableCommander } from 'ioredis';

/** The replies of a pipeline, in order; throws the first error Redis replied with. */
export async function execPipeline(pipeline: ChainableCommander): Promise<unknown[]> {
  return ((await pipeline.exec()) ?? []).map(([error, reply]) => {
    if (error) throw error;
    return reply;
  });
}
