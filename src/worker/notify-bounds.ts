/**
 * How far a worker's notifications may go at once (notifier.ts): POSTs on
 * their way, notifications held, and each try's time limit; checked once,
 * when the worker starts.
 */
import { UsageError } from '../errors.js';

export interface NotifyBounds {
  /** POSTs on their way at once (and so sockets open to receivers). */
  concurrent: number;
  /** Notifications held at once: sending, waiting for their turn, or waiting to be tried again. */
  backlog: number;
  /** Time limit of one try, ms. */
  tryTimeoutMs: number;
}

export const DEFAULT_NOTIFY_BOUNDS: NotifyBounds = { concurrent: 4, backlog: 100, tryTimeoutMs: 10_000 };

/** The bounds, the defaults where not given; a UsageError for one that is not a whole number of at least 1. */
export function resolveNotifyBounds(given: Partial<NotifyBounds> = {}): NotifyBounds {
  const bounds = { ...DEFAULT_NOTIFY_BOUNDS };
  for (const name of Object.keys(bounds) as (keyof NotifyBounds)[]) {
    const value = given[name];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 1 || value > 2 ** 31 - 1) {
      throw new UsageError(`expected notifyBounds.${name} to be a whole number from 1 to ${2 ** 31 - 1}, got '${value}'`);
    }
    bounds[name] = value;
  }
  return bounds;
}
