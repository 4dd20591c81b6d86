/**
 * Pipelines whose replies are read as they are: a command Redis refused (an
 * ACL without a permission, a key of another type) fails the read, never
 * passes for "nothing there".
 */
import type { ChainableCommander } from 'ioredis';

/**
 * The replies of a pipeline, in order; throws the first error Redis replied
 * with. With `wrongTypeAsNull`, a key of another type than the command reads
 * (one written by hand where fitq reads a run or a worker) reads as null.
 */
export async function execPipeline(pipeline: ChainableCommander, options: { wrongTypeAsNull?: boolean } = {}): Promise<unknown[]> {
  return ((await pipeline.exec()) ?? []).map(([error, reply]) => {
    if (error && options.wrongTypeAsNull && error.message.startsWith('WRONGTYPE')) return null;
    if (error) throw error;
    return reply;
  });
}

/** For a read's `.catch`: a key of another type (written by hand) reads as `none`; any other error stands. */
export function wrongTypeAs<T>(none: T): (error: unknown) => T {
  return (error) => {
    if (error instanceof Error && error.message.startsWith('WRONGTYPE')) return none;
    throw error;
  };
}
