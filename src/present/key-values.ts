/**
 * KEY=VALUE lists, as `--label` and `--env` take them on the command line
 * and the dashboard's run list takes its label filter.
 */
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';

/** Parses repeated KEY=VALUE flags into an object; a key given twice is an error. */
export function parseKeyValues(flag: string, values: readonly string[] | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const entry of values ?? []) {
    const eq = entry.indexOf('=');
    if (eq <= 0) throw new UsageError(`invalid ${flag} ${quote(entry)}: expected KEY=VALUE`);
    const key = entry.slice(0, eq);
    // Own keys only: `constructor` or `__proto__` are names like any other.
    if (Object.hasOwn(result, key)) throw new UsageError(`invalid ${flag} ${quote(entry)}: ${quote(key)} given twice`);
    Object.defineProperty(result, key, { value: entry.slice(eq + 1), enumerable: true, writable: true, configurable: true });
  }
  return result;
}
