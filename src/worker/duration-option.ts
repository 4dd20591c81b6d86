/** A worker's durations given in ms, checked as its flags are (options.ts, gpu-probe-options.ts). */
import { UsageError } from '../errors.js';

/** Longest timer Node can arm (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Checks a duration given in ms; messages speak in seconds, as the flags do. */
export function durationMs(flag: string, value: number, minMs: number): number {
  if (!Number.isFinite(value) || value < minMs || value > MAX_TIMER_MS) {
    throw new UsageError(
      `expected ${flag} to be between ${minMs / 1000} and ${Math.floor(MAX_TIMER_MS / 1000)} seconds, got '${value / 1000}'`,
    );
  }
  return value;
}
