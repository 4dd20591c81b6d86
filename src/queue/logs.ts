/**
 * Run output, kept in a Redis stream per run (`run:<id>:log`), trimmed to
 * about the last `logMaxLines` lines. Each entry is one line of stdout or
 * stderr, appended by the appendLog script; the last entry of an ended run is
 * an end marker, so followers stop without polling.
 */
import type { Redis } from 'ioredis';
import type { NamespaceKeys } from './keys.js';

/** Lines kept per run; the stream keeps at least this many. */
export const DEFAULT_LOG_MAX_LINES = 10_000;

export interface LogLine {
  stream: 'stdout' | 'stderr';
  line: string;
}

export type LogEntry = { id: string } & (
  | { kind: 'line'; stream: 'stdout' | 'stderr'; line: string }
  | { kind: 'end'; status: string }
  /** Its worker died and it went back to staged; output of the next attempt follows. */
  | { kind: 'restaged'; reason: string }
);

function toEntry(id: string, flat: string[]): LogEntry {
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i] as string] = flat[i + 1] as string;
  if (fields.event === 'end') return { id, kind: 'end', status: fields.status ?? '' };
  if (fields.event === 'restaged') return { id, kind: 'restaged', reason: fields.reason ?? '' };
  return { id, kind: 'line', stream: fields.stream === 'stderr' ? 'stderr' : 'stdout', line: fields.line ?? '' };
}

/** Reads entries after `afterId` ("0" for all), in pages. */
export async function readLogEntries(
  redis: Redis,
  keys: NamespaceKeys,
  runId: string,
  afterId = '0',
  count = 1000,
): Promise<LogEntry[]> {
  const replies = await redis.xrange(keys.runLog(runId), `(${afterId}`, '+', 'COUNT', count);
  return replies.map(([id, flat]) => toEntry(id, flat));
}

/**
 * Waits up to `blockMs` for entries after `afterId`. Needs a connection of
 * its own: XREAD BLOCK holds it.
 */
export async function waitLogEntries(
  redis: Redis,
  keys: NamespaceKeys,
  runId: string,
  afterId: string,
  blockMs: number,
): Promise<LogEntry[]> {
  const reply = await redis.xread('COUNT', 1000, 'BLOCK', blockMs, 'STREAMS', keys.runLog(runId), afterId);
  if (!reply) return [];
  return reply.flatMap(([, entries]) => entries.map(([id, flat]) => toEntry(id, flat)));
}
