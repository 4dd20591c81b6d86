/**
 * History retention: how many ended runs a namespace keeps, and for how long.
 * Stored in its `settings` hash; applied by the Lua scripts that end runs
 * (lua/includes/retentionSettings.lua holds the same defaults: a test checks
 * they agree) and at once by `fitq retention` and `fitq runs clean`.
 */
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import { ENDED_STATUSES, type RunStatus } from './run-record.js';

/** A namespace's retention; null: no limit. */
export interface Retention {
  /** Completed runs kept, the most recently ended; 0 keeps none. */
  keepCompleted: number | null;
  /** Failed, canceled, lost, rejected and timed-out runs kept, together; 0 keeps none. */
  keepFailed: number | null;
  /** How long after it ended a run is kept, in ms. */
  keepAgeMs: number | null;
}

export type RetentionSetting = keyof Retention;

export const RETENTION_SETTINGS: readonly RetentionSetting[] = ['keepCompleted', 'keepFailed', 'keepAgeMs'];

/** What an absent setting means: 10,000 completed, 10,000 failed, 7 days. */
export const RETENTION_DEFAULTS: Readonly<Retention> = Object.freeze({
  keepCompleted: 10_000,
  keepFailed: 10_000,
  keepAgeMs: 7 * 24 * 60 * 60 * 1000,
});

/** The stored text of a limit ("off" for none). */
export function storedLimit(value: number | null): string {
  return value === null ? 'off' : String(value);
}

/** A stored limit as the Lua scripts read it: "off" (or an age of 0) is no limit, unreadable text the default. */
function readLimit(setting: RetentionSetting, text: string | undefined): number | null {
  if (text === undefined) return RETENTION_DEFAULTS[setting];
  if (text === 'off') return null;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0) return RETENTION_DEFAULTS[setting];
  return setting === 'keepAgeMs' && value === 0 ? null : value;
}

/** The retention a `settings` hash gives, and which settings it holds (the rest are defaults). */
export function readRetention(hash: Record<string, string>): { retention: Retention; stored: RetentionSetting[] } {
  const stored = RETENTION_SETTINGS.filter((setting) => hash[setting] !== undefined);
  return {
    retention: {
      keepCompleted: readLimit('keepCompleted', hash.keepCompleted),
      keepFailed: readLimit('keepFailed', hash.keepFailed),
      keepAgeMs: readLimit('keepAgeMs', hash.keepAgeMs),
    },
    stored,
  };
}

/** Checks a changed limit: a count is a whole number, an age a whole number of ms above 0; null is no limit. */
export function validateLimit(setting: RetentionSetting, value: number | null): void {
  if (value === null) return;
  const min = setting === 'keepAgeMs' ? 1 : 0;
  if (!Number.isSafeInteger(value) || value < min) {
    const expected = setting === 'keepAgeMs' ? 'a whole number of ms above 0, or null' : 'a whole number from 0, or null';
    throw new UsageError(`expected ${setting} to be ${expected}, got ${quote(String(value))}`);
  }
}

/** The statuses `cleanRuns` may remove, checked: ended ones only (default: all of them). */
export function cleanableStatuses(statuses: readonly string[] | undefined): RunStatus[] {
  const list = [...new Set(statuses ?? ENDED_STATUSES)];
  const notEnded = list.find((status) => !(ENDED_STATUSES as readonly string[]).includes(status));
  if (notEnded !== undefined) {
    throw new UsageError(`only ended runs are cleaned: expected a status from ${ENDED_STATUSES.join(', ')}, got ${quote(notEnded)}`);
  }
  return list as RunStatus[];
}
