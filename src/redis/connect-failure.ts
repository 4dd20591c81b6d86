/**
 * One line saying why a first connect to Redis failed: unreachable, TLS, a
 * login refused, or behind Sentinel and Cluster a master name the sentinels
 * do not know, a seed that is no sentinel or no cluster node. A mistake in
 * the settings is a UsageError (exit 2); Redis out of reach a
 * ConnectionError.
 */
import { ConnectionError, UsageError } from '../errors.js';
import { describeTarget, targetHosts, type RedisTarget } from './redis-url.js';

/** Errors at connect that waiting for a failover cannot mend. */
const LASTING_REFUSAL = [
  /\bNo such master with that name\b/,
  /unknown command .sentinel/i,
  /\b(WRONGPASS|NOAUTH|NOPERM)\b/,
  /cluster support disabled/i,
  // At a first connect: no sentinel answered (each one's failure is the "Last error"), or no seed of the cluster.
  // Sentinels that answered with a master that is down are a failover under way, waited for.
  /All sentinels are unreachable.*Last error:/s,
  /Failed to refresh slots cache/,
];

/** Whether an error seen while connecting is one no failover mends (a wrong name, password or kind of server). */
export function isLastingRefusal(error: Error): boolean {
  return LASTING_REFUSAL.some((pattern) => pattern.test(error.message));
}

/** The error to throw when the first connect to `target` failed with `error`. */
export function connectFailure(target: RedisTarget, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  const where = describeTarget(target);
  const options = { cause: error };
  if (target.kind === 'sentinel') {
    // ioredis: "All sentinels are unreachable and retry is disabled. Last error: REASON"
    const reason = /Last error: (.*)$/s.exec(message)?.[1]?.trim() ?? message;
    if (/No such master with that name/.test(reason)) {
      return new UsageError(`the sentinels at ${targetHosts(target)} know no master named '${target.masterName}' (the name after the hosts in the redis+sentinel:// URL)`, options);
    }
    if (/unknown command .sentinel/i.test(reason)) {
      return new UsageError(`${targetHosts(target)} is a Redis server, not a sentinel: a redis+sentinel:// URL names the sentinels (port 26379 by default); a server alone is redis://HOST:PORT`, options);
    }
    if (/\b(WRONGPASS|NOAUTH)\b/.test(reason) && /All sentinels/.test(message)) {
      return new UsageError(`the sentinels at ${targetHosts(target)} refused the login: ${reason} (their own password: ?sentinel_password= in the URL or FITQ_REDIS_SENTINEL_PASSWORD)`, options);
    }
    if (/All sentinels are unreachable/.test(message)) {
      return new ConnectionError(`cannot reach any sentinel at ${targetHosts(target)}: ${reason === 'Connection is closed.' ? 'connection refused or closed' : reason}`, options);
    }
  }
  if (target.kind === 'cluster' && /Failed to refresh slots cache|None of startup nodes/.test(message)) {
    // ioredis: "Failed to refresh slots cache.", the last seed's own error beside it.
    const nodeError = (error as { lastNodeError?: unknown } | undefined)?.lastNodeError;
    const detail = nodeError instanceof Error ? nodeError.message : 'Connection is closed.';
    if (/cluster support disabled/i.test(detail)) {
      return new UsageError(`${targetHosts(target)} is not a Redis Cluster node (cluster support is disabled there): a server alone is redis://HOST:PORT`, options);
    }
    if (/\b(WRONGPASS|NOAUTH|NOPERM)\b/.test(detail)) return new ConnectionError(`Redis at ${where} refused the login: ${detail}`, options);
    return new ConnectionError(`cannot reach any node of ${where}: ${detail === 'Connection is closed.' ? 'connection refused or closed' : detail}`, options);
  }
  return new ConnectionError(serverFailure(where, target.tls, error), options);
}

/** Error codes Node gives when the server's certificate cannot be verified or TLS fails. */
const TLS_ERROR = /CERT|SIGNATURE|ERR_TLS|ERR_SSL|ERR_OSSL|EPROTO/;

/**
 * The reason in an OpenSSL error string, e.g. "tlsv13 alert certificate
 * required" out of "806C…:error:0A00045C:SSL routines:ssl3_read_bytes:tlsv13
 * alert certificate required:../deps/…/rec_layer_s3.c:1601:SSL alert number 116".
 */
export function opensslReason(message: string): string {
  const line = message.split('\n')[0]!.trim();
  return /(?:^|:)error:[0-9A-Fa-f]+:[^:]*:[^:]*:([^:]+)/.exec(line)?.[1]?.trim() || line;
}

/** One line saying why the first connect to one server failed: unreachable, TLS, or login refused. */
function serverFailure(shownUrl: string, tls: boolean, error: unknown): string {
  const reason = opensslReason(error instanceof Error ? error.message : String(error));
  const code = (error as { code?: unknown } | undefined)?.code;
  if (/^(WRONGPASS|NOAUTH)\b/.test(reason)) return `Redis at ${shownUrl} refused the login: ${reason}`;
  if (/^NOPERM\b/.test(reason)) return `Redis at ${shownUrl} refused a command: ${reason}`;
  // Under TLS 1.3 a server refusing the client's certificate (or its lack)
  // says so after the handshake; a client writing meanwhile sees a reset (Node's
  // "disconnected before secure TLS connection was established"), not the alert.
  if (tls && (code === 'ECONNRESET' || code === 'EPIPE')) {
    return `TLS connection to Redis at ${shownUrl} failed: the server closed it as it was set up (${reason}): client certificate required? give one with --redis-cert and --redis-key`;
  }
  if ((typeof code === 'string' && TLS_ERROR.test(code)) || /\b(certificate|SSL|TLS)\b/i.test(reason)) {
    return `TLS connection to Redis at ${shownUrl} failed: ${reason}`;
  }
  return `cannot reach Redis at ${shownUrl}: ${reason}`;
}

