/**
 * A run's job data as the dashboard serves it to Bull Board: what the run
 * is, with what may be a secret replaced by a marker. The dashboard shows a
 * run's environment by names only, never values; its signature and its
 * notification URL (a webhook's URL often holds its token) are not shown
 * either. The run itself, in Redis, is untouched.
 */
import type { RunData } from '../model/run-data.js';

/** What a hidden value shows as. */
export const REDACTED = '[redacted]';

/** Fields of a run's data shown as the marker whatever they hold. */
const HIDDEN_FIELDS = ['signature', 'notify'] as const satisfies readonly (keyof RunData)[];

/** `data` with every env value, the signature and the notification URL replaced by REDACTED; anything else as it is. */
export function redactJobData(data: unknown): unknown {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return data;
  const shown: Record<string, unknown> = { ...(data as Record<string, unknown>) };
  const { env } = shown;
  if (env !== null && typeof env === 'object' && !Array.isArray(env)) {
    shown.env = Object.fromEntries(Object.keys(env).map((name) => [name, REDACTED]));
  } else if (env !== undefined) {
    shown.env = REDACTED;
  }
  for (const field of HIDDEN_FIELDS) if (shown[field] !== undefined) shown[field] = REDACTED;
  return shown;
}
