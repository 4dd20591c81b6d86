/**
 * The dependencies a stager gives (`fitq stage --after…`), resolved: a
 * unique prefix of a run id or of an array id becomes the full id, an
 * array id stands for every run of the array. What they mean, and how the
 * scripts judge them, is model/dependencies.ts.
 */
import { UsageError } from '../errors.js';
import type { StageRequest } from '../model/stage.js';
import { validateRunId } from '../model/names.js';
import { quote } from '../text/quote.js';
import type { QueueContext } from './context.js';

/** Candidates named when a reference is ambiguous. */
const SHOWN_CANDIDATES = 5;

/** What a dependency reference names: a run, or a whole array. */
type Named = { run: string } | { array: string };

/**
 * What `ref` names, of the runs it is the id of or prefixes (`runs`, as
 * resolveRunIds gives them) and the namespace's arrays: a full id first
 * (a run's, then an array's), else the one run or array it prefixes.
 */
function nameOf(ref: string, runs: readonly string[], arrays: readonly string[]): Named {
  if (runs.length === 1 && runs[0] === ref) return { run: ref };
  if (arrays.includes(ref)) return { array: ref };
  const prefixed = arrays.filter((id) => id.startsWith(ref)).sort();
  if (runs.length + prefixed.length === 1) return runs.length === 1 ? { run: runs[0]! } : { array: prefixed[0]! };
  if (runs.length + prefixed.length === 0) throw new UsageError(`unknown run or array ${quote(ref)} in a dependency (--after): nothing was staged`);
  const listed = [...runs.map((id) => `run ${id}`), ...prefixed.map((id) => `array ${id}`)];
  const more = listed.length > SHOWN_CANDIDATES ? ', …' : '';
  throw new UsageError(`${quote(ref)} in a dependency (--after) is ambiguous: ${listed.slice(0, SHOWN_CANDIDATES).join(', ')}${more}: nothing was staged`);
}

/**
 * The requests with every dependency a full run id, or a whole array: a
 * unique prefix of a run id or of an array id is resolved (an array id
 * stands for every run of the array: `arrays`); an id staged by the same
 * call stays as it is (the stage script checks it comes earlier: no
 * cycle). An unknown or ambiguous id is a UsageError naming it.
 */
export async function resolveDependencies(ctx: QueueContext, requests: readonly StageRequest[]): Promise<StageRequest[]> {
  const batch = new Set(requests.flatMap((request) => (request.runId === undefined ? [] : [request.runId])));
  const refs = [...new Set(requests.flatMap((request) => (request.after ?? []).flatMap((group) => group.ids)))].filter((id) => !batch.has(id));
  if (refs.length === 0) return [...requests];
  refs.forEach(validateRunId);
  const [runs, arrays] = await Promise.all([
    ctx.scripts.resolveRunIds(refs, SHOWN_CANDIDATES),
    ctx.redis.hgetall(ctx.keys.arrays).catch(() => ({})),
  ]);
  const named = new Map(refs.map((ref, i) => [ref, nameOf(ref, runs[i] ?? [], Object.keys(arrays))]));
  return requests.map((request) =>
    request.after === undefined
      ? request
      : {
          ...request,
          after: request.after.map((group) => {
            const each = group.ids.map((id): Named => named.get(id) ?? { run: id });
            const wholes = [...(group.arrays ?? []), ...each.flatMap((name) => ('array' in name ? [name.array] : []))];
            return {
              kind: group.kind,
              ids: each.flatMap((name) => ('run' in name ? [name.run] : [])),
              ...(wholes.length > 0 ? { arrays: wholes } : {}),
            };
          }),
        },
  );
}
