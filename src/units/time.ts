/**
 * Times and durations as people read them: the local time of day, a date
 * when it is not today, and short durations ("4m05s"). The CLI, the run
 * model's reasons and the dashboard all show times through here.
 */
const pad = (n: number) => String(n).padStart(2, '0');

/** The local time of day, "14:03:07", or "14:03" without seconds (chart axes). */
export function formatClock(epochMs: number, seconds = true): string {
  const date = new Date(epochMs);
  const minutes = `${pad(date.getHours())}:${pad(date.getMinutes())}`;
  return seconds ? `${minutes}:${pad(date.getSeconds())}` : minutes;
}

/**
 * A time as people read it, in the local time zone (TZ): "14:03:07" today,
 * "2026-11-20 14:03:07" on other days; "" for none. Every time fitq shows a
 * person (tables, run details, reasons, the dashboard) goes through here or
 * formatClock, so no page mixes zones; JSON keeps times as epoch-ms numbers.
 */
export function formatTime(epochMs: number | undefined, now = Date.now()): string {
  if (epochMs === undefined) return '';
  const date = new Date(epochMs);
  const time = formatClock(epochMs);
  const sameDay = date.toDateString() === new Date(now).toDateString();
  return sameDay ? time : `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${time}`;
}

/** "850ms", "12.3s", "4m05s", "2h03m". */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}
