/**
 * How the runs of an array stand, for the runs that wait for the whole
 * array (`fitq stage --after ARRAY`, or `--after @` after an array): the
 * scripts count them in the `arrays:tally` hash as they are staged, end,
 * are restarted or removed (lua/includes/arrayTally.lua, tallyArrayRun.lua)
 * and judge such dependencies by it, as Slurm judges a job array. This
 * module reads it, to say why a run waits; it decides nothing.
 */
import type { Redis } from 'ioredis';
import type { NamespaceKeys } from './keys.js';

export interface ArrayTally {
  /** Runs staged, held or running. */
  open: number;
  /** Runs completed. */
  ok: number;
  /** Runs that ended otherwise, or were removed before they ended. */
  notok: number;
}

/** The tallies of these arrays; an array fitq does not count (gone) is left out. */
export async function readArrayTallies(redis: Redis, keys: NamespaceKeys, arrays: Iterable<string>): Promise<Map<string, ArrayTally>> {
  const ids = [...new Set(arrays)];
  const tallies = new Map<string, ArrayTally>();
  if (ids.length === 0) return tallies;
  const fields = ids.flatMap((id) => [`${id}:open`, `${id}:ok`, `${id}:notok`]);
  // A key of another type (written by hand) counts nothing.
  const values = await redis.hmget(keys.arrayTally, ...fields).catch(() => fields.map(() => null));
  ids.forEach((id, i) => {
    const [open, ok, notok] = values.slice(i * 3, i * 3 + 3);
    if (open !== null && open !== undefined) tallies.set(id, { open: Number(open), ok: Number(ok ?? 0), notok: Number(notok ?? 0) });
  });
  return tallies;
}

/** The tally of an array as the listed runs say (a run not listed, such as one removed, is not counted). */
export function tallyOfRuns(statuses: Iterable<string>, isEnded: (status: string) => boolean): ArrayTally {
  const tally: ArrayTally = { open: 0, ok: 0, notok: 0 };
  for (const status of statuses) {
    if (status === 'completed') tally.ok++;
    else if (isEnded(status)) tally.notok++;
    else tally.open++;
  }
  return tally;
}
