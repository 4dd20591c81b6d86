/**
 * Where a worker's notifications may go (`fitq worker --notify-allow URL`).
 * A notification URL is whatever someone who can write to Redis stored, so
 * without a limit a worker POSTs wherever they like, from inside the
 * worker's network (its own 127.0.0.1 included).
 *
 * An allowed URL is matched on its parts as the URL parser reads them, never
 * as text (`https://hooks.example.com` as a text prefix would let
 * `https://hooks.example.com.evil.net` and `https://hooks.example.com@evil.net`
 * through): the same scheme, host and port, and a path that is the allowed
 * path or lies below it, segment by segment (`/fitq` allows `/fitq` and
 * `/fitq/a`, not `/fitqx`). Dot segments are resolved first (`/fitq/../admin`
 * is `/admin`), and a path below the allowed one holding an encoded slash or
 * backslash (`%2F`, `%5C`) is refused, as a receiver may decode it into
 * another path.
 *
 * Without --notify-allow a worker notifies any http(s) URL, unless it
 * requires signed runs: a notification URL is not signed (the namespace's
 * is a setting anyone who can write to Redis may change), so such a worker
 * notifies nowhere until told where.
 */
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import { hasCredentials, parseNotifyUrl } from '../model/notify.js';

export interface NotifyTarget {
  protocol: string;
  hostname: string;
  /** '' for the scheme's default port, as the URL parser gives it. */
  port: string;
  /** Without a trailing slash: '' allows every path. */
  path: string;
}

/** Where a worker's notifications may go; `signedOnly`: nowhere, because the worker requires signed runs and no target was given. */
export type NotifyTargets = { kind: 'any' } | { kind: 'listed'; targets: readonly NotifyTarget[] } | { kind: 'signedOnly' };

/** Why a notification to an unlisted URL is not sent. */
export const NOT_ALLOWED = 'its URL is not under --notify-allow';
export const SIGNED_ONLY =
  'this worker requires signed runs and notification URLs are not signed; allow receivers with --notify-allow';

/** The worker's targets from --notify-allow (none given: undefined) and whether it requires signed runs; a UsageError quoting a bad one. */
export function resolveNotifyTargets(allow: readonly string[] | undefined, signed: boolean): NotifyTargets {
  if (allow === undefined) return signed ? { kind: 'signedOnly' } : { kind: 'any' };
  return { kind: 'listed', targets: allow.map(parseTarget) };
}

function parseTarget(text: string): NotifyTarget {
  const url = parseNotifyUrl(text, '--notify-allow');
  if (url.search !== '' || url.hash !== '' || /[?#]/.test(text.trim())) {
    throw new UsageError(`invalid --notify-allow ${quote(text)}: a query or fragment is not matched; give the scheme, host, port and path to allow`);
  }
  return { protocol: url.protocol, hostname: url.hostname, port: url.port, path: url.pathname.replace(/\/+$/, '') };
}

/** Why a notification to `text` is not sent, if it is not: not an http(s) URL, credentials in it, or not an allowed target. */
export function notifyRefusal(targets: NotifyTargets, text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'its URL is not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'its URL is not http(s)';
  if (hasCredentials(url)) return 'its URL holds a user name or password';
  if (targets.kind === 'any') return undefined;
  if (targets.kind === 'signedOnly') return SIGNED_ONLY;
  return targets.targets.some((target) => covers(target, url)) ? undefined : NOT_ALLOWED;
}

function covers(target: NotifyTarget, url: URL): boolean {
  if (url.protocol !== target.protocol || url.hostname !== target.hostname || url.port !== target.port) return false;
  if (target.path === '' || url.pathname === target.path) return true;
  return url.pathname.startsWith(`${target.path}/`) && !/%2f|%5c/i.test(url.pathname.slice(target.path.length));
}
