/**
 * Notifications: when a run ends, its worker POSTs a JSON record of it to
 * the run's `--notify` URL, else the namespace's (`fitq notify set`, the
 * `notifyUrl` field of the namespace's `settings` hash). This module holds
 * what stager, CLI and worker share: the URL's validation and the payload.
 */
import { UsageError } from '../errors.js';
import { quote } from './names.js';
import type { RunRecord } from './run-record.js';

/** The field of the namespace's `settings` hash holding its notification URL. */
export const NOTIFY_SETTING = 'notifyUrl';

/** Longest URL taken. */
const MAX_URL_LENGTH = 2048;

/** The URL, checked: http or https, at most 2,048 characters; a UsageError quoting it otherwise. */
export function validateNotifyUrl(text: string, flag = '--notify'): string {
  const refuse = (why: string) => new UsageError(`invalid ${flag} ${quote(text.length > 200 ? `${text.slice(0, 200)}…` : text)}: ${why}`);
  if (text.length > MAX_URL_LENGTH) throw refuse(`longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse('expected an http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse('expected an http:// or https:// URL');
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
