/**
 * The runs and arrays that ids name: each a full id, or a prefix of
 * exactly one. An unknown or ambiguous reference is a UsageError naming it
 * (and the candidates).
 */
import { UsageError } from '../errors.js';
import { validateRunId } from '../model/names.js';
import { quote } from '../text/quote.js';
import { RESOLVE_CHUNK } from './chunks.js';
import type { QueueContext } from './context.js';
import { unknownRun } from './run-errors.js';

/** Candidates named when a prefix is ambiguous. */
const SHOWN_CANDIDATES = 5;

/**
 * The run ids that references name: each a full id, or a prefix of exactly
 * one run id (a full id wins over the longer ids it prefixes). An unknown
 * or ambiguous reference is a UsageError, naming it (the candidates too).
 */
export async function resolveRunIds(ctx: QueueContext, refs: readonly string[]): Promise<string[]> {
  refs.forEach(validateRunId);
  if (refs.length === 0) return [];
  const found: string[][] = [];
  for (let i = 0; i < refs.length; i += RESOLVE_CHUNK) found.push(...(await ctx.scripts.resolveRunIds(refs.slice(i, i + RESOLVE_CHUNK), SHOWN_CANDIDATES)));
  return refs.map((ref, i) => {
    const ids = found[i] ?? [];
    if (ids.length === 0) throw unknownRun(ref);
    if (ids.length > 1) {
      const more = ids.length > SHOWN_CANDIDATES ? ', …' : '';
      throw new UsageError(`run id prefix ${quote(ref)} is ambiguous: ${ids.slice(0, SHOWN_CANDIDATES).join(', ')}${more}`);
    }
    return ids[0]!;
  });
}

/** resolveRunIds for one reference. */
export async function resolveRunId(ctx: QueueContext, ref: string): Promise<string> {
  const [id] = await resolveRunIds(ctx, [ref]);
  return id!;
}

/**
 * The array an id names: a full array id, or a prefix of exactly one
 * (as for runs). An unknown or ambiguous one is a UsageError, naming it.
 */
export async function resolveArrayId(ctx: QueueContext, ref: string): Promise<string> {
  validateRunId(ref);
  const arrays = Object.keys(await ctx.redis.hgetall(ctx.keys.arrays).catch(() => ({})));
  if (arrays.includes(ref)) return ref;
  const found = arrays.filter((id) => id.startsWith(ref)).sort();
  if (found.length === 0) throw new UsageError(`unknown array ${quote(ref)} (no run of the namespace is part of it)`);
  if (found.length > 1) throw new UsageError(`array id prefix ${quote(ref)} is ambiguous: ${found.slice(0, SHOWN_CANDIDATES).join(', ')}${found.length > SHOWN_CANDIDATES ? ', …' : ''}`);
  return found[0]!;
}
