/**
 * Where `fitq runs --json` stops and `--cursor` goes on: the staging number
 * of the last run a page looked at, as text (`"1200"`); JSON's `next` is
 * null when no run follows. Runs keep their staging number as they start
 * and end, so paging on lists every run once.
 */
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';

export function formatCursor(next: number | undefined): string | null {
  return next === undefined ? null : String(next);
}

export function parseCursor(text: string): number {
  if (!/^\d{1,15}$/.test(text.trim())) {
    throw new UsageError(`invalid --cursor ${quote(text)}: expected the "next" of an earlier fitq runs --json (a number)`);
  }
  return Number(text.trim());
}
