/**
 * The namespace's settings: whether its queue is paused (`fitq pause`,
 * `fitq resume`), its notification URL (`fitq notify`) and its history
 * retention (`fitq retention`).
 */
import { ENDED_STATUSES } from '../model/run-record.js';
import { NOTIFY_SETTING, validateNotifyUrl } from '../model/notify.js';
import { readRetention, RETENTION_SETTINGS, storedLimit, validateLimit, type Retention, type RetentionSetting } from '../model/retention.js';
import type { QueueContext } from './context.js';
import { cleanRuns } from './end.js';

/** The namespace's retention, and which settings it holds (the others are defaults). */
export interface RetentionState {
  retention: Retention;
  stored: RetentionSetting[];
}

/** Whether the namespace's queue is paused (fitq pause, or BullMQ's pause: any value of `paused`). */
export async function isPaused(ctx: QueueContext): Promise<boolean> {
  return (await ctx.redis.hexists(ctx.keys.queue.key('meta'), 'paused')) === 1;
}

/**
 * Pauses the queue (no worker starts a run until resumed; running runs go
 * on) or resumes it; false when it already was so.
 */
export async function setPaused(ctx: QueueContext, paused: boolean): Promise<boolean> {
  return ctx.scripts.setPaused(paused);
}

/** The namespace's notification URL (fitq notify), if set. */
export async function getNotifyUrl(ctx: QueueContext): Promise<string | undefined> {
  return (await ctx.redis.hget(ctx.keys.settings, NOTIFY_SETTING)) ?? undefined;
}

/**
 * Sets the namespace's notification URL (null: clears it): workers POST a
 * run's record there when it ends, unless the run has its own --notify.
 * A URL that is not http(s) is a UsageError. Returns whether it changed.
 */
export async function setNotifyUrl(ctx: QueueContext, url: string | null): Promise<boolean> {
  return ctx.scripts.setNotify(url === null ? '' : validateNotifyUrl(url, 'URL'));
}

/** The namespace's history retention (see setRetention). */
export async function getRetention(ctx: QueueContext): Promise<RetentionState> {
  return readRetention(await ctx.redis.hgetall(ctx.keys.settings));
}

/**
 * Changes the namespace's history retention: how many completed runs, and
 * how many failed, canceled, lost, rejected and timed-out runs together, are kept,
 * and for how long after they ended (null: no limit; a setting not given
 * stays as it is; `reset` first puts every setting back to its default).
 * Each run's end then removes the oldest runs beyond them; the runs beyond
 * them already are removed at once. Returns the retention now and how
 * many runs were removed.
 */
export async function setRetention(
  ctx: QueueContext,
  changes: Partial<Retention>,
  options: { reset?: boolean } = {},
): Promise<RetentionState & { removed: number }> {
  const values: [string, string][] = options.reset ? RETENTION_SETTINGS.map((setting) => [setting, '']) : [];
  for (const setting of RETENTION_SETTINGS) {
    const value = changes[setting];
    if (value === undefined) continue;
    validateLimit(setting, value);
    values.push([setting, storedLimit(value)]);
  }
  const state = readRetention(await ctx.scripts.setRetention(values));
  return { ...state, removed: await applyRetention(ctx, state.retention) };
}

/** Removes the ended runs beyond a retention: too many of a state, or too old. */
async function applyRetention(ctx: QueueContext, retention: Retention): Promise<number> {
  let removed = 0;
  if (retention.keepCompleted !== null) removed += await cleanRuns(ctx, { statuses: ['completed'], keep: retention.keepCompleted });
  if (retention.keepFailed !== null) {
    removed += await cleanRuns(ctx, { statuses: ENDED_STATUSES.filter((status) => status !== 'completed'), keep: retention.keepFailed });
  }
  if (retention.keepAgeMs !== null) removed += await cleanRuns(ctx, { olderThanMs: retention.keepAgeMs });
  return removed;
}
