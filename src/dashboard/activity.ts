/**
 * Runs started and ended per minute over the last hour, and how long the
 * runs that ended in each minute ran: what the overview's chart draws.
 */
import type { RunSummary } from '../model/run-summary.js';

export const MINUTE_MS = 60_000;
export const ACTIVITY_MINUTES = 60;

export interface MinuteActivity {
  /** Epoch ms of the minute's start. */
  start: number;
  started: number;
  /** Ended completed. */
  completed: number;
  /** Ended any other way (failed, canceled, lost, rejected, timeout). */
  endedOtherwise: number;
  /** Mean duration (start to end) of the runs that ended in it, ms; undefined when none did. */
  meanDurationMs?: number;
}

export interface Activity {
  minutes: MinuteActivity[];
  started: number;
  ended: number;
  /** Median duration of the runs that ended in the window, ms. */
  medianDurationMs?: number;
  maxDurationMs?: number;
}

/** The last `count` whole minutes up to `now` (server clock), oldest first. */
export function activityOf(runs: readonly RunSummary[], now: number, count = ACTIVITY_MINUTES): Activity {
  const first = Math.floor(now / MINUTE_MS) * MINUTE_MS - (count - 1) * MINUTE_MS;
  const minutes: (MinuteActivity & { durations: number[] })[] = Array.from({ length: count }, (_, i) => ({
    start: first + i * MINUTE_MS,
    started: 0,
    completed: 0,
    endedOtherwise: 0,
    durations: [],
  }));
  const slot = (time: number | undefined) => (time === undefined || time < first ? undefined : minutes[Math.floor((time - first) / MINUTE_MS)]);
  const durations: number[] = [];
  for (const run of runs) {
    const started = slot(run.startedAt);
    if (started) started.started++;
    const ended = slot(run.endedAt);
    if (!ended) continue;
    if (run.status === 'completed') ended.completed++;
    else ended.endedOtherwise++;
    // A run canceled while staged never started: it has no duration.
    if (run.startedAt !== undefined && run.endedAt !== undefined) {
      const duration = Math.max(0, run.endedAt - run.startedAt);
      ended.durations.push(duration);
      durations.push(duration);
    }
  }
  durations.sort((a, b) => a - b);
  return {
    minutes: minutes.map(({ durations: ds, ...minute }) => (ds.length > 0 ? { ...minute, meanDurationMs: ds.reduce((a, b) => a + b, 0) / ds.length } : minute)),
    started: minutes.reduce((sum, minute) => sum + minute.started, 0),
    ended: minutes.reduce((sum, minute) => sum + minute.completed + minute.endedOtherwise, 0),
    ...(durations.length > 0 ? { medianDurationMs: durations[Math.floor((durations.length - 1) / 2)]!, maxDurationMs: durations[durations.length - 1]! } : {}),
  };
}
