/**
 * Run output, kept in a Redis stream per run (`run:<id>:log`), trimmed to
 * about the last `logMaxLines` lines. Each entry is one line of stdout or
 * stderr, appended by the appendLog script; the last entry of an ended run is
 * an end marker, so followers stop without polling. Followers wait on the
 * queue's event stream too, where the run's start, end and removal show.
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

/** The id of the last entry of the queue's event stream ("0-0" if it has none): where waitLogEntries starts. */
export async function lastEventId(redis: Redis, keys: NamespaceKeys): Promise<string> {
  const [last] = await redis.xrevrange(keys.queue.key('events'), '+', '-', 'COUNT', 1);
  return last?.[0] ?? '0-0';
}

export interface LogWait {
  /** Entries of the log stream after the given id. */
  entries: LogEntry[];
  /** The last event read from the queue's event stream: where to go on. */
  eventsAfter: string;
  /** Whether any of those events was the run's (it started, ended, was re-staged or removed). */
  runEvent: boolean;
}

/**
 * Waits up to `blockMs` for log entries after `afterId`, or for events of
 * the queue after `eventsAfter` (the run's start, end or removal shows there
 * whatever its log holds). Needs a connection of its own: XREAD BLOCK holds
 * it.
 */
export async function waitLogEntries(
  redis: Redis,
  keys: NamespaceKeys,
  runId: string,
  afterId: string,
  eventsAfter: string,
  blockMs: number,
): Promise<LogWait> {
  const logKey = keys.runLog(runId);
  const reply = await redis.xread('COUNT', 1000, 'BLOCK', blockMs, 'STREAMS', logKey, keys.queue.key('events'), afterId, eventsAfter);
  const wait: LogWait = { entries: [], eventsAfter, runEvent: false };
  for (const [key, entries] of reply ?? []) {
    if (key === logKey) {
      wait.entries = entries.map(([id, flat]) => toEntry(id, flat));
      continue;
    }
    for (const [id, flat] of entries) {
      wait.eventsAfter = id;
      for (let i = 0; i + 1 < flat.length; i += 2) if (flat[i] === 'jobId' && flat[i + 1] === runId) wait.runEvent = true;
    }
  }
  return wait;
}
