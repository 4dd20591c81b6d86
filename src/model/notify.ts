/**
 * Notifications: when a run ends, its worker POSTs a JSON record of it to
 * the run's `--notify` URL, else the namespace's (`fitq notify set`, the
 * `notifyUrl` field of the namespace's `settings` hash). This module holds
 * what stager, CLI and worker share: the URL's validation and the payload.
 */
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import type { RunRecord } from './run-record.js';

/** The field of the namespace's `settings` hash holding its notification URL. */
export const NOTIFY_SETTING = 'notifyUrl';

/** Longest URL taken. */
const MAX_URL_LENGTH = 2048;

/** Why a URL with a user name or password is refused: Node's fetch will not send one, and logs must never show it. */
export const CREDENTIALS_REFUSED = "a URL with a user name or password is refused (workers cannot send one); put the receiver's token in its path or query";

/** The text as messages show it: a user name and password, if any, as `***`. */
export function maskCredentials(text: string): string {
  return text.replace(/^([^a-z]*[a-z][a-z0-9+.-]*:[/\\]*)[^/?#\\]*@/i, '$1***@');
}

/** Whether a parsed URL holds a user name or a password. */
export function hasCredentials(url: URL): boolean {
  return url.username !== '' || url.password !== '';
}

/**
 * The text as an http(s) URL without credentials, at most 2,048 characters;
 * a UsageError quoting it (credentials masked) otherwise. The one check of
 * notification URLs (--notify, fitq notify set) and of what --notify-allow takes.
 */
export function parseNotifyUrl(text: string, flag: string): URL {
  const refuse = (why: string) => {
    const shown = maskCredentials(text);
    return new UsageError(`invalid ${flag} ${quote(shown.length > 200 ? `${shown.slice(0, 200)}…` : shown)}: ${why}`);
  };
  if (text.length > MAX_URL_LENGTH) throw refuse(`longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse('expected an http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse('expected an http:// or https:// URL');
  if (hasCredentials(url)) throw refuse(CREDENTIALS_REFUSED);
  return url;
}

/** A notification URL, checked (parseNotifyUrl), as given. */
export function validateNotifyUrl(text: string, flag = '--notify'): string {
  parseNotifyUrl(text, flag);
  return text;
}

/**
 * The JSON body POSTed when a run ends (docs/lifecycle.md, "Notifications").
 * Never the run's environment: it may hold secrets.
 */
export interface NotifyPayload {
  event: 'run.ended';
  /** The namespace (--queue). */
  queue: string;
  id: string;
  status: string;
  exitCode: number | null;
  signal: string | null;
  reason: string | null;
  worker: string | null;
  /** Epoch ms. */
  stagedAt: number;
  startedAt: number | null;
  endedAt: number | null;
  labels: Record<string, string>;
  command: string[];
  shell: boolean;
  requires: string;
}

export function notifyPayload(queue: string, run: RunRecord): NotifyPayload {
  return {
    event: 'run.ended',
    queue,
    id: run.id,
    status: run.status,
    exitCode: run.exitCode ?? null,
    signal: run.signal ?? null,
    reason: run.reason ?? null,
    worker: run.worker ?? null,
    stagedAt: run.stagedAt,
    startedAt: run.startedAt ?? null,
    endedAt: run.endedAt ?? null,
    labels: run.labels,
    command: run.command,
    shell: run.shell,
    requires: run.requires,
  };
}
