/**
 * The lines of a page of runs, as `fitq runs` and the dashboard's runs page
 * show them: each run a line, or each array's runs one line
 * (array-lines.ts) with its limit read from the pool and, when no status or
 * label selects runs, its tally (how all its runs stand, the page listing
 * some of them). Reads only what the page's arrays need.
 */
import type { FitqClient } from '../client.js';
import type { RunRecord } from '../model/run-record.js';
import { anyArrayLimit, arrayLimits, collapseArrays, type ListLine } from './array-lines.js';

export interface PageLineOptions {
  /** Each array's runs on one line (otherwise each run its own). */
  collapse: boolean;
  /** Whether runs were selected by status or label: an array line counts the runs it lists then, not its tally. */
  selected: boolean;
}

export async function pageLines(client: FitqClient, runs: readonly RunRecord[], options: PageLineOptions): Promise<ListLine[]> {
  if (!options.collapse) return runs.map((run) => ({ run }));
  const limits = anyArrayLimit(runs) ? arrayLimits(await client.listPool()) : new Map<string, number>();
  const arrays = runs.flatMap((run) => (run.array === undefined ? [] : [run.array]));
  const tallies = options.selected || arrays.length === 0 ? new Map() : await client.readArrayTallies(arrays);
  return collapseArrays(runs, limits, tallies);
}
