/**
 * The runs whose queue state does not tell their fitq status, counted by
 * status for /metrics: held and staged runs in waiting-children, and the
 * ended runs in failed (failed, canceled, lost, rejected, timeout). Read a
 * part at a time (countRunStatuses-*.lua), so 100,000 canceled runs cost a
 * scrape 200 short calls, never one long one. Runs that move between parts
 * may be counted once too few or too many: a scrape's other figures are
 * read in one step (readMetrics-*.lua), these are not.
 */
import { STATUS_COUNT_CHUNK } from '../operations/chunks.js';
import type { Scripts } from '../queue/scripts.js';

/** Runs by status in waiting-children and failed, added to `into`. */
export async function addParkedAndEndedCounts(scripts: Scripts, into: Map<string, number>, part = STATUS_COUNT_CHUNK): Promise<void> {
  for (const state of ['parked', 'ended'] as const) {
    for (let from = 0; ; from += part) {
      const { counts, read } = await scripts.countRunStatuses(state, from, part);
      for (const [status, count] of counts) into.set(status, (into.get(status) ?? 0) + count);
      if (read < part) break;
    }
  }
}
