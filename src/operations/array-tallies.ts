/**
 * Reads how the runs of arrays stand, from the `arrays:tally` hash the
 * scripts keep (model/array-tally.ts says what a tally is), to say why a
 * run that waits for a whole array waits, and how an array's limit stands.
 */
import type { ArrayTally } from '../model/array-tally.js';
import type { ReadContext } from './context.js';

/** The tallies of these arrays; an array fitq does not count (gone) is left out. */
export async function readArrayTallies({ redis, keys }: ReadContext, arrays: Iterable<string>): Promise<Map<string, ArrayTally>> {
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
