/**
 * A notification's URL: a run's own (--notify, in its job data), and any
 * URL as the worker's log shows it (its origin only: a webhook's path or
 * query often holds its secret).
 */

/** A run's own --notify URL, from its job data. */
export function ownUrl(data: unknown): string | undefined {
  if (typeof data !== 'string') return undefined;
  try {
    const notify = (JSON.parse(data) as { notify?: unknown }).notify;
    return typeof notify === 'string' ? notify : undefined;
  } catch {
    return undefined;
  }
}

/** The URL as logs show it: its origin only (never credentials, path or query). */
export function shown(url: string): string {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? '(a URL that is not http(s))' : origin;
  } catch {
    return '(invalid URL)';
  }
}
